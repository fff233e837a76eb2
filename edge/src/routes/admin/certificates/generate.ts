import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { GenerateCertificateSchema, IssuedCertificateSchema } from '../../../contracts/certificate.js';
import { generateCertificate } from '../../../services/certificates/generate.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/admin/certificates/generate',
  permission: 'platform:admin',
  auditType: 'certificate.generated',
  summary: 'Issue a server certificate from an internal authority',
  description: 'A new key (`ecdsa` P-256 by default, or `rsa` 2048) and a certificate for `hosts` signed by the authority `issuer`: CA:FALSE, digitalSignature (+keyEncipherment for RSA), serverAuth, one SAN per host (DNS or IP), the issuer\'s key identifier. At most 398 days (`validity_days`, 398 when omitted) and never beyond the issuer\'s end: a longer request is shortened to it and `shortened_to_issuer` is true. Stored alone (never bundled with the root); renewed by the service 30 days before its end. 400: `hosts` empty, more than 100, not DNS names or IP addresses, or a wildcard other than a whole leftmost label followed by two labels; an unknown `issuer` or one that is not an authority; `validity_days` not a whole number from 1 to 398. 409: the name exists, or the issuer has expired. Nothing is stored when refused.',
  tags: ['Admin'],
  request: { body: { required: true, content: { 'application/json': { schema: GenerateCertificateSchema } } } },
  errors: [409],
  responses: {
    201: { description: 'Certificate issued', content: { 'application/json': { schema: z.object({ certificate: IssuedCertificateSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ certificate: await generateCertificate(c.get('db'), c.get('config')['database.crypto.encryption_key'], c.req.valid('json')) }, 201);
