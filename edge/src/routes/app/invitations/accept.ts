import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { AcceptInvitationSchema, AcceptedInvitationSchema } from '../../../contracts/member.js';
import { acceptInvitation } from '../../../services/invitations/accept.js';
import { addressBucketOf, checkLimit, enforceLimit } from '../../../middleware/rate-limit.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/app/api/invitations/accept',
  permission: 'public',
  auditType: null, // recorded by the service: `invitation.accepted` in the project's trail, naming the new member
  summary: 'Accept an invitation',
  description: [
    'Takes the `token` of the invitation link (`…/app/invitation#token=<token>`). For an address without an account it creates one with `password` (required: 10 to 128 characters, not the address; optional `name`) and the address verified;',
    'for an address with an account it adds the membership (a `password` is refused: the existing one stays). The user\'s default project becomes this one when they have none. Then sign in with `POST /app/api/session`.',
    'An unknown, expired, already used or revoked token: 400 `invalid, expired or already used invitation token`, whichever it is, and nothing changes; a password that breaks the rule: 400 naming `password`.',
    'No credential; counted against `ratelimit.login_per_minute` per client address (429 beyond).',
  ].join(' '),
  tags: ['Console people'],
  security: [],
  request: { body: { required: true, content: { 'application/json': { schema: AcceptInvitationSchema } } } },
  errors: [409],
  responses: {
    200: { description: 'Accepted: the member and the project', content: { 'application/json': { schema: AcceptedInvitationSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  enforceLimit(await checkLimit(c, 'login', addressBucketOf(c)));
  const accepted = await acceptInvitation(c.get('db'), c.req.valid('json'), { clientIp: c.get('clientIp'), method: c.req.method, path: c.req.path });
  return c.json(accepted, 200);
};
