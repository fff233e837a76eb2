import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CreateDomainSchema, DomainSchema } from '../../../schemas/domain.js';
import { createDomain } from '../../../services/domains/create.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/domains',
  permission: 'domains:write',
  summary: 'Register a domain',
  description: [
    'Mail to this domain is accepted by the relay nodes and stored for the project. A name is registered by one project in the whole installation: a taken name is 409 (without saying by whom).',
    'A DKIM key pair is made for it: RSA 2048 (`rsa-sha256`) unless `dkim_algorithm` is `ed25519`. The private half is stored sealed and never shown; `dns_records` lists what to publish (DKIM, SPF, a DMARC suggestion, MX). The domain is `pending` until `POST /api/v1/domains/{id}/verify` finds the required records; only a verified domain may send.',
  ].join('\n\n'),
  tags: ['Domains'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateDomainSchema } } } },
  errors: [409],
  responses: {
    201: { description: 'Domain registered', content: { 'application/json': { schema: z.object({ domain: DomainSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ domain: await createDomain(c.get('db'), c.get('config'), c.get('projectId')!, c.req.valid('json')) }, 201);
