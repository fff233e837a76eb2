// Per-request context: settings (parsed once per isolate, settings.ts), the
// database handle and the client address.
import { createMiddleware } from 'hono/factory';
import { peerAddress, resolveClientAddress } from '@edgemail/shared';
import { connect } from '../db/client.js';
import { settingsOf } from '../settings.js';
import type { AppEnv } from '../env.js';

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
