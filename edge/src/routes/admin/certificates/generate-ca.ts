import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CertificateSchema, GenerateAuthoritySchema } from '../../../contracts/certificate.js';
import { generateAuthority } from '../../../services/certificates/generate-authority.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/admin/certificates/generate-ca',
  permission: 'platform:admin',
  auditType: 'certificate.authority_generated',
  summary: 'Create an internal certificate authority',
  description: 'A new key (ECDSA P-256, or RSA 2048) and a self-signed authority: CA:TRUE with pathlen:0 (it signs server certificates only) and keyCertSign+cRLSign, both critical. `validity_days` 1 to 36500, ten years when omitted. The subject is built from `subject`\'s fields (each its own attribute, never parsed from text); `common_name` defaults to `name`. `algorithm` `ed25519` is refused (400). 409 when the name exists: an authority is never replaced. The private key is sealed and never returned.',
  tags: ['Admin'],
  request: { body: { required: true, content: { 'application/json': { schema: GenerateAuthoritySchema } } } },
  errors: [409],
  responses: {
    201: { description: 'Authority created', content: { 'application/json': { schema: z.object({ certificate: CertificateSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ certificate: await generateAuthority(c.get('db'), c.get('config')['database.crypto.encryption_key'], c.req.valid('json')) }, 201);
