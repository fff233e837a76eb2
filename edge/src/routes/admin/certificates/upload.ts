import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CertificateSchema, UploadCertificateSchema } from '../../../contracts/certificate.js';
import { uploadCertificate } from '../../../services/certificates/upload.js';
import type { AppEnv } from '../../../env.js';

const Reply = z.object({ certificate: CertificateSchema });

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/admin/certificates',
  permission: 'platform:admin',
  auditType: 'certificate.uploaded',
  summary: 'Upload a certificate and its private key',
  description: 'Stores an operator\'s pair: `certificate` (one PEM certificate), `private_key` (unencrypted PKCS#8, PKCS#1 or SEC1 PEM, proven to match by a signature) and optional `chain` (intermediates, served after it). 201 for a new name; 200 when it replaces an uploaded or issued certificate of that name in place (rotation: listener assignments keep pointing at it). A certificate with CA:TRUE is stored as an authority and can issue. 400, naming the field: unreadable or garbage PEM, more than one certificate in `certificate`, an encrypted or unreadable key, RSA under 2048 bits, an ECDSA curve other than P-256 and P-384, a key that does not match, a `chain` that does not chain, a certificate expired or not yet valid, an Ed25519 authority. 409: replacing the service\'s own (`self-signed`, `acme:*`) or an authority, or an authority over a name a listener is serving. The key is sealed and never returned.',
  tags: ['Admin'],
  request: { body: { required: true, content: { 'application/json': { schema: UploadCertificateSchema } } } },
  errors: [409],
  responses: {
    200: { description: 'Replaced the certificate of that name', content: { 'application/json': { schema: Reply } } },
    201: { description: 'Stored', content: { 'application/json': { schema: Reply } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { certificate, created } = await uploadCertificate(c.get('db'), c.get('config')['database.crypto.encryption_key'], c.req.valid('json'));
  return created ? c.json({ certificate }, 201) : c.json({ certificate }, 200);
};
