// Reads the settings from an environment (process.env or Worker bindings).
import { envName, parseText, type Setting } from './define.js';
import { removedSettings, settings, type SettingName } from './settings.js';

type ValueOf<S> = S extends Setting<infer T> ? T : never;
export type Config = { readonly [K in SettingName]: ValueOf<(typeof settings)[K]> };

export class ConfigError extends Error {
  constructor(readonly setting: string, readonly env: string, problem: string) {
    super(`invalid setting ${setting} (${env}): ${problem}`);
    this.name = 'ConfigError';
  }
}

export interface LoadedConfig {
  config: Config;
  /** Removed settings that are set, for the boot log. */
  removedInUse: string[];
}

const byEnvName = new Map(Object.keys(settings).map((name) => [envName(name), name as SettingName]));
const removedByEnvName = new Map<string, string>(removedSettings.map((name) => [envName(name), name]));
// Listener-scoped removed blocks (`submission.tls.acme.*`) are recognised by shape.
const REMOVED_ACME_BLOCK = /^SERVICE_[A-Z_]+_TLS_ACME_[A-Z_]+$/;

/**
 * Builds the typed configuration from `SERVICE_*` variables. Anything unknown
 * or malformed throws a ConfigError naming the setting.
 */
const RELAY_NODE_PREFIX = 'relay_node.inbound.';

/** @param env process.env or the Worker's bindings: only its `SERVICE_*` keys are read. */
export function loadConfig(env: object): LoadedConfig {
  const values: Record<string, unknown> = {};
  const removedInUse: string[] = [];
  for (const [name, setting] of Object.entries(settings)) values[name] = (setting as Setting<unknown>).default;

  const given = new Set<string>();
  for (const [key, raw] of Object.entries(env)) {
    if (!key.startsWith('SERVICE_') || raw === undefined) continue;
    const name = byEnvName.get(key);
    if (!name) {
      const removed = removedByEnvName.get(key) ?? (REMOVED_ACME_BLOCK.test(key) ? key : undefined);
      if (removed) { removedInUse.push(removed); continue; }
      throw new ConfigError(key, key, 'unknown setting');
    }
    const setting = settings[name] as Setting<unknown>;
    let value: unknown;
    try {
      value = parseText(setting.kind, String(raw));
    } catch (e) {
      throw new ConfigError(name, key, (e as Error).message);
    }
    const checked = setting.schema.safeParse(value);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      const where = issue && issue.path.length ? ` (item ${issue.path.join('.')})` : '';
      throw new ConfigError(name, key, `${issue?.message ?? 'invalid value'}${where}`);
    }
    values[name] = checked.data;
    given.add(name);
  }

  // A relay node's MX listener reads `relay_node.inbound.*`, the spec's names for
  // "the same settings on a relay node"; one left unset follows its `inbound.*`
  // twin, so setting SERVICE_INBOUND_RATE_PER_MINUTE reaches the listener too.
  for (const name of Object.keys(settings)) {
    const twin = name.startsWith(RELAY_NODE_PREFIX) ? name.slice('relay_node.'.length) : undefined;
    if (twin && !given.has(name) && given.has(twin)) values[name] = values[twin];
  }

  for (const listener of ['submission', 'inbound', 'relay_node.inbound']) {
    if (values[`${listener}.proxy_protocol.enabled`] && (values[`${listener}.proxy_protocol.trusted`] as string[]).length === 0) {
      const name = `${listener}.proxy_protocol.trusted`;
      throw new ConfigError(name, envName(name), 'may not be empty when proxy_protocol.enabled is true');
    }
  }
  return { config: values as Config, removedInUse };
}
