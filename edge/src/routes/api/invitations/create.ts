import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { CreateInvitationSchema, InvitationSchema } from '../../../contracts/member.js';
import { createInvitation } from '../../../services/invitations/create.js';
import { peopleActor } from '../members/actor.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/invitations',
  permission: 'members:write',
  role: 'admin',
  summary: 'Invite an address into the project',
  description: [
    'Mails `email` a link to join the project with `role` (default `member`) and, optionally, the custom group `group_id`.',
    'The link holds a single-use random token (only its SHA-256 is stored; it is never in this answer) and expires after `console.invitation_ttl` (7 days by default).',
    'The mail is the service\'s own (From `console.mail_from`), filed under the system-mail project: it counts against no project\'s plan and is not in this project\'s email log (docs/console.md).',
    'Inviting an address again replaces its pending invitation (the older link stops working). Accepting: `POST /app/api/invitations/accept`.',
    'Needs the admin or owner role (a key: `members:write`). Only an owner\'s session or a platform credential invites an owner (403 for an admin; every project key, even one holding `*`, 403 `project keys cannot change ownership: …`). Refusals: 400 naming `email` or a `group_id` not of this project; 409 when the address is already a member.',
  ].join(' '),
  tags: ['Members'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateInvitationSchema } } } },
  errors: [409],
  responses: {
    201: { description: 'The invitation (its token went to the mailbox only)', content: { 'application/json': { schema: z.object({ invitation: InvitationSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const invitation = await createInvitation(c.get('db'), c.get('config'), c.get('projectId'), c.req.valid('json'), peopleActor(c));
  return c.json({ invitation }, 201);
};
