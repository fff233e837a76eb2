import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { InvitationSchema } from '../../../contracts/member.js';
import { listInvitations } from '../../../services/invitations/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/invitations',
  permission: 'members:read',
  role: 'admin',
  summary: 'List pending invitations',
  description: 'Invitations not yet accepted and not expired, newest first. Needs the admin or owner role (a key: `members:read`).',
  tags: ['Members'],
  responses: {
    200: { description: 'The pending invitations', content: { 'application/json': { schema: z.object({ invitations: z.array(InvitationSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ invitations: await listInvitations(c.get('db'), c.get('projectId')) }, 200);
