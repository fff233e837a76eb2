// Per-request context: settings (the environment's, parsed once per isolate,
// with the installation overrides over them: services/settings/overrides.ts),
// the database handle and the client address.
import { createMiddleware } from 'hono/factory';
import { peerAddress, resolveClientAddress } from '@edgemail/shared';
import { connect } from '../db/client.js';
import { effectiveSettings } from '../services/settings/overrides.js';
import type { AppEnv } from '../env.js';

export const requestContext = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    const { config, isTrustedProxy } = await effectiveSettings(c.env);
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
