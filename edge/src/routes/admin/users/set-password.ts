import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { SetUserPasswordResultSchema, SetUserPasswordSchema } from '../../../contracts/admin.js';
import { IdParams } from '../../../contracts/common.js';
import { recordSecurityEvent } from '../../../http/security-event.js';
import { setUserPassword } from '../../../services/users/set-password.js';
import { assertRecentSignIn } from '../../../services/console/recent-sign-in.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'put',
  path: '/api/v1/admin/users/{id}/password',
  permission: 'platform:admin',
  auditType: 'user.password_set',
  summary: 'Set a user\'s password',
  description: [
    'Sets the password of a user, for an operator who hands it over: a new account\'s first password (`POST /api/v1/admin/users` makes accounts without one), or a way back in without the reset mail.',
    'The console\'s password rule applies (10 to 128 characters, not only spaces, not the account\'s address or its local part): 400 naming `password`, nothing changed. An unknown user is 404.',
    'It clears the sign-in lockout and spends every pending password reset link of the account. When the account had a password (`replaced: true`), every session of the account is signed out, as a reset does; a first password leaves sessions alone.',
    'A platform admin\'s console session must have signed in within the last 15 minutes (403 `sign in again to …`, nothing changed): a password is a way into the account.',
    'Two-factor stays as it was (a user with TOTP still needs a code), and the address is not counted as verified.',
    'Written to the admin trail as `user.password_set` (the credential) and to the user\'s own security trail as `auth.password.set_by_admin` (`detail`: `credential=<id> replaced` or `credential=<id> first`).',
  ].join(' '),
  tags: ['Admin'],
  request: { params: IdParams, body: { required: true, content: { 'application/json': { schema: SetUserPasswordSchema } } } },
  errors: [404],
  responses: { 200: { description: 'The password is set', content: { 'application/json': { schema: SetUserPasswordResultSchema } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const principal = c.get('principal');
  if (principal.kind === 'session') assertRecentSignIn(principal.signedInAt, 'set a user\'s password');
  const done = await setUserPassword(c.get('db'), c.req.valid('param').id, c.req.valid('json').password);
  // In the user's own trail too: they should see that an operator set their password.
  const by = principal.kind === 'platform' ? `credential=${principal.id}` : `user=${principal.kind === 'session' ? principal.userId : principal.id}`;
  await recordSecurityEvent(c, 'auth.password.set_by_admin', { id: done.user.id, email: done.user.email }, 200, `${by} ${done.replaced ? 'replaced' : 'first'}`);
  return c.json(done, 200);
};
