import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CertificateSchema } from '../../../contracts/certificate.js';
import { listCertificates } from '../../../services/certificates/record.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/certificates',
  permission: 'platform:admin',
  summary: 'List the stored certificates',
  description: 'Every certificate of the shared store by name: authorities, issued, uploaded, and the service\'s own (`self-signed`, `acme:<host>`), with the listeners each is assigned to. No private key.',
  tags: ['Admin'],
  responses: {
    200: { description: 'The certificates', content: { 'application/json': { schema: z.object({ certificates: z.array(CertificateSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ certificates: await listCertificates(c.get('db')) }, 200);
