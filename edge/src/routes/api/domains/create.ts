import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { CreateDomainSchema, DomainSchema } from '../../../contracts/domain.js';
import { createDomain } from '../../../services/domains/create.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/domains',
  permission: 'domains:write',
  summary: 'Register a domain',
  description: [
    'Registers the name for the project. Its mail is accepted by the relay nodes and stored for the project only once ownership is proven: when `POST /api/v1/domains/{id}/verify` (or the periodic check) finds the domain\'s DKIM record, whose key is this registration\'s own (`ownership_proven_at`). Until then RCPT to the name is `550 5.1.1`. Several projects may register a name; the first to prove it takes it, and the others\' registrations become `failed` with `status_reason` `ownership of <name> was proven by another project`. A name another project has proven is 409 (without saying which), unless a check found that project\'s DKIM record gone; the same name twice in a project is 409; more than `domains.max_per_project` domains is 400.',
    'A DKIM key pair is made for it: RSA 2048 (`rsa-sha256`) unless `dkim_algorithm` is `ed25519`. The private half is stored sealed and never shown; `dns_records` lists what to publish (DKIM, SPF, a DMARC suggestion, MX). The domain is `pending` until `POST /api/v1/domains/{id}/verify` finds the required records; only a verified domain may send.',
  ].join('\n\n'),
  tags: ['Domains'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateDomainSchema } } } },
  errors: [400, 409],
  responses: {
    201: { description: 'Domain registered', content: { 'application/json': { schema: z.object({ domain: DomainSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ domain: await createDomain(c.get('db'), c.get('config'), c.get('projectId'), c.req.valid('json')) }, 201);
