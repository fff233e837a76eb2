// The Worker's settings, read from its bindings once per isolate. Beside
// env.ts, below everything: the request middleware, the config guard, the
// cron handler and the Durable Objects all read them here.
import { ipMatcher, loadConfig, type Config } from '@edgemail/shared';
import type { Bindings } from './env.js';

interface Loaded { config: Config; isTrustedProxy: (ip: string) => boolean }
let cached: { env: Bindings; loaded: Loaded } | undefined;

/** Settings are read once per isolate; a bad value names the setting on every request. */
export function settingsOf(env: Bindings): Loaded {
  if (cached?.env === env) return cached.loaded;
  const { config, removedInUse } = loadConfig(env);
  if (removedInUse.length) console.warn(`removed settings are set and ignored: ${removedInUse.join(', ')}`);
  const loaded = { config, isTrustedProxy: ipMatcher(config['server.trusted_proxies']) };
  cached = { env, loaded };
  return loaded;
}
