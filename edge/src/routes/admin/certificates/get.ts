import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CertificateNameParams, CertificateSchema } from '../../../contracts/certificate.js';
import { findCertificate } from '../../../services/certificates/record.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/certificates/{name}',
  permission: 'platform:admin',
  summary: 'Get a certificate',
  description: 'The record of the certificate named `name` (an operator\'s name, `self-signed` or `acme:<host>`, URL-encoded). No private key.',
  tags: ['Admin'],
  request: { params: CertificateNameParams },
  errors: [404],
  responses: {
    200: { description: 'The certificate', content: { 'application/json': { schema: z.object({ certificate: CertificateSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ certificate: await findCertificate(c.get('db'), c.req.valid('param').name) }, 200);
