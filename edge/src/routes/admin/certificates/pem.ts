import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { contentDisposition, downloadHeaders } from '../../../http/download.js';
import { CertificateNameParams } from '../../../contracts/certificate.js';
import { certificatePem } from '../../../services/certificates/record.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/certificates/{name}/pem',
  permission: 'platform:admin',
  summary: 'Download a certificate as PEM',
  description: 'The certificate, then its chain when one is stored, as `<name>.pem` (`application/x-pem-file`). Never a private key: no route returns one. For an authority this is the root to install in clients that should trust what it issues.',
  tags: ['Admin'],
  request: { params: CertificateNameParams },
  errors: [404],
  responses: {
    200: { description: 'The PEM certificate (and chain)', content: { 'application/x-pem-file': { schema: z.string() } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { name } = c.req.valid('param');
  return new Response(await certificatePem(c.get('db'), name), {
    status: 200,
    headers: {
      'Content-Type': 'application/x-pem-file',
      'Content-Disposition': contentDisposition(`${name.replace(/[^A-Za-z0-9._-]/g, '_')}.pem`, 'certificate.pem'),
      ...downloadHeaders,
    },
  });
};
