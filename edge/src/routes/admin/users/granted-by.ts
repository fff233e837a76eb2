// How the grant and revoke routes name their actor in the user's own trail.
import type { Context } from 'hono';
import type { GrantedBy } from '../../../services/users/set-platform-admin.js';
import type { AppEnv } from '../../../env.js';

export function grantedBy(c: Context<AppEnv>): GrantedBy {
  const principal = c.get('principal');
  const by = principal.kind === 'session' ? `user=${principal.userId}` : `credential=${principal.id}`;
  return { by, clientIp: c.get('clientIp'), method: c.req.method, path: c.req.path };
}
