// The effective settings as GET /api/v1/admin/settings shows them: each
// declared setting with its value, where the value comes from and whether it
// can be changed at run time. Secrets (declared `secret: true`) show only
// whether they are set.
import { envName, isRuntimeSetting, settings, type Config, type Setting } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { readOverrides } from './overrides.js';

export const REDACTED = '<redacted>';

export type SettingSource = 'default' | 'environment' | 'runtime';

export interface SettingView {
  name: string;
  value: unknown;
  source: SettingSource;
  runtime_changeable: boolean;
  secret: boolean;
  description: string;
}

/**
 * @param env    the Worker's bindings: which `SERVICE_*` variables are set
 * @param config the environment's settings (settings.ts), without overrides
 */
export async function listSettings(db: Db, env: object, config: Config): Promise<SettingView[]> {
  const overrides = await readOverrides(db);
  const given = new Set(Object.entries(env).filter(([, v]) => v !== undefined).map(([k]) => k));
  return Object.entries(settings).map(([name, declared]) => {
    const setting = declared as Setting<unknown>;
    const key = name as keyof Config;
    const overridden = key in overrides;
    const value = overridden ? overrides[key] : config[key];
    const source: SettingSource = overridden ? 'runtime' : given.has(envName(name)) ? 'environment' : 'default';
    const secret = setting.secret === true;
    return {
      name,
      value: secret ? (value === '' ? null : REDACTED) : value,
      source,
      runtime_changeable: isRuntimeSetting(name),
      secret,
      description: setting.description,
    };
  });
}
