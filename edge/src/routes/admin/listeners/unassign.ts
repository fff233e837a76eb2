import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { ListenerParams, ListenerSchema } from '../../../contracts/listener.js';
import { getListener, unassignCertificate } from '../../../services/certificates/assignments.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/admin/listeners/{listener}/certificate',
  permission: 'platform:admin',
  summary: 'Remove a listener\'s certificate assignment',
  description: 'The listener falls back to the rest of the chain: ACME for the names in `acme.hosts` when `acme.enabled`, else the shared self-signed pair; every relay node follows within 30 seconds, without a restart. The certificate itself is kept. A listener with nothing assigned is answered the same (200, nothing changes). An unknown listener is 404 `listener not found`. `edgemail tls unassign` does the same offline.',
  tags: ['Admin'],
  request: { params: ListenerParams },
  errors: [404],
  auditType: 'listener.certificate_unassigned',
  responses: {
    200: { description: 'The listener without an assignment', content: { 'application/json': { schema: z.object({ listener: ListenerSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { listener } = c.req.valid('param');
  await unassignCertificate(c.get('db'), listener);
  return c.json({ listener: await getListener(c.get('db'), c.get('config'), listener) }, 200);
};
