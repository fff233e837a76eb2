// The settings as the edge uses them: the environment's (settings.ts, once
// per isolate) with the overrides stored through PATCH /api/v1/admin/settings
// layered on top. The overrides are read at most once per OVERRIDES_TTL_MS per
// isolate, so a change reaches every isolate within that bound without a query
// on each request; the isolate that made the change forgets its copy at once.
import { installationSettings } from '@edgemail/schema';
import { isRuntimeSetting, settings, type Config, type Setting } from '@edgemail/shared';
import { connect, type Db } from '../../db/client.js';
import { settingsOf } from '../../settings.js';
import type { Bindings } from '../../env.js';

/** How stale an isolate's copy of the overrides may be (docs/settings.md). */
export const OVERRIDES_TTL_MS = 10_000;

type Loaded = ReturnType<typeof settingsOf>;
type Overrides = Partial<Record<keyof Config, unknown>>;

let cached: { env: Bindings; base: Loaded; at: number; overrides: Overrides; loaded: Loaded } | undefined;

/** The stored overrides still valid for a runtime setting; any other row is skipped and logged. */
export async function readOverrides(db: Db): Promise<Overrides> {
  const rows = await db.select({ name: installationSettings.name, value: installationSettings.value }).from(installationSettings);
  const overrides: Overrides = {};
  for (const { name, value } of rows) {
    const checked = isRuntimeSetting(name) ? (settings[name] as Setting<unknown>).schema.safeParse(safeJson(value)) : undefined;
    if (checked?.success) overrides[name as keyof Config] = checked.data;
    else console.warn(`installation setting ${name} ignored: ${checked ? 'its stored value no longer passes its check' : 'not changeable at run time'}`);
  }
  return overrides;
}

function safeJson(text: string): unknown {
  try { return JSON.parse(text); } catch { return undefined; }
}

/** The effective settings of this isolate; reads the overrides when its copy is older than the bound. */
export async function effectiveSettings(env: Bindings): Promise<Loaded> {
  const base = settingsOf(env);
  const now = Date.now();
  if (cached && cached.env === env && cached.base === base && now - cached.at < OVERRIDES_TTL_MS) return cached.loaded;
  let overrides: Overrides;
  try {
    overrides = await readOverrides(connect(base.config['database.url'], env.LOCAL_NEON_BRIDGE));
  } catch (e) {
    // The database is unreachable: keep the last overrides known (the request will likely fail on its own queries).
    console.error(`installation settings unreadable (${e instanceof Error ? e.message : String(e)}); using the last known`);
    overrides = cached?.env === env ? cached.overrides : {};
  }
  const loaded: Loaded = { ...base, config: { ...base.config, ...overrides } as Config };
  cached = { env, base, at: now, overrides, loaded };
  return loaded;
}

/** After a change in this isolate: the next request reads the overrides again. */
export function forgetOverrides(): void {
  cached = undefined;
}
