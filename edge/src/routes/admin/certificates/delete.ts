import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CertificateNameParams } from '../../../contracts/certificate.js';
import { deleteCertificate } from '../../../services/certificates/delete.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/admin/certificates/{name}',
  permission: 'platform:admin',
  summary: 'Delete a certificate',
  description: '409 while it is assigned to a listener that has TLS on (assign another or unassign it first). An assignment on a listener with TLS off is cleared with it. Deleting an authority keeps the certificates it issued (their `issuer` becomes null; they are no longer renewed).',
  tags: ['Admin'],
  request: { params: CertificateNameParams },
  errors: [404, 409],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  await deleteCertificate(c.get('db'), c.get('config'), c.req.valid('param').name);
  return c.body(null, 204);
};
