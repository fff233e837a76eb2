// Cookie safety: a mutating request carrying the session cookie must come from
// the service's own origin, the host it arrived on, or `cors.allowed_origins`.
// A missing Origin is refused too: browsers send it on every mutating fetch.
import type { Context } from 'hono';
import { forbidden } from '../http/errors.js';
import type { AppEnv } from '../env.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function checkCookieOrigin(c: Context<AppEnv>): void {
  if (SAFE_METHODS.has(c.req.method)) return;
  const origin = c.req.header('origin');
  const config = c.get('config');
  const allowed = new Set([
    new URL(config['server.public_url']).origin,
    new URL(c.req.url).origin,
    ...config['cors.allowed_origins'].map((o) => new URL(o).origin),
  ]);
  if (!origin || !allowed.has(origin)) {
    throw forbidden(`cross-origin request refused: Origin ${origin ?? '(none)'} is not allowed`);
  }
}
