import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { AssignCertificateSchema, ListenerParams, ListenerSchema } from '../../../contracts/listener.js';
import { assignCertificate, getListener } from '../../../services/certificates/assignments.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'put',
  path: '/api/v1/admin/listeners/{listener}/certificate',
  permission: 'platform:admin',
  summary: 'Assign a certificate to an SMTP listener',
  description: 'The listener presents the stored certificate named `certificate` on every relay node, replacing any assignment. It takes effect on every relay node within 30 seconds, without a restart (nodes poll the edge every 15 s). A listener with TLS off keeps the assignment but presents nothing until TLS is turned on. Refused, changing nothing: an unknown listener (404 `listener not found`), no certificate of that name (404 `certificate not found`), a certificate authority (409: assign a certificate it issued), an expired certificate (409). `edgemail tls assign` does the same offline.',
  tags: ['Admin'],
  request: { params: ListenerParams, body: { required: true, content: { 'application/json': { schema: AssignCertificateSchema } } } },
  errors: [404, 409],
  auditType: 'listener.certificate_assigned',
  responses: {
    200: { description: 'The listener with its new assignment', content: { 'application/json': { schema: z.object({ listener: ListenerSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { listener } = c.req.valid('param');
  await assignCertificate(c.get('db'), listener, c.req.valid('json').certificate);
  return c.json({ listener: await getListener(c.get('db'), c.get('config'), listener) }, 200);
};
