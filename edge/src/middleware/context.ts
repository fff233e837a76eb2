// Per-request context: settings (parsed once per isolate), the database
// handle and the client address.
import { createMiddleware } from 'hono/factory';
import { ipMatcher, loadConfig, peerAddress, resolveClientAddress, type Config } from '@edgemail/shared';
import { connect } from '../db/client.js';
import type { AppEnv, Bindings } from '../env.js';

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

export const requestContext = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    const { config, isTrustedProxy } = settingsOf(c.env);
    c.set('config', config);
    c.set('db', connect(config['database.url'], c.env.LOCAL_NEON_BRIDGE));
    c.set('clientIp', resolveClientAddress({
      // Without CF-Connecting-IP the peer is unknown, never loopback (which an allowlist might hold).
      peer: peerAddress(c.req.header('cf-connecting-ip')),
      forwardedFor: c.req.header('x-forwarded-for'),
      isTrustedProxy,
    }));
    await next();
  });
