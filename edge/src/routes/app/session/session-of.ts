// The session principal of a `session` route (authorize has refused anything else).
import type { Context } from 'hono';
import type { Principal } from '../../../middleware/principal.js';
import type { AppEnv } from '../../../env.js';

export function sessionOf(c: Context<AppEnv>): Extract<Principal, { kind: 'session' }> {
  const principal = c.get('principal');
  if (principal.kind !== 'session') throw new Error('a session route reached without a session');
  return principal;
}
