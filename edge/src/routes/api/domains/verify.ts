import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { DomainSchema } from '../../../contracts/domain.js';
import { verifyDomain } from '../../../services/domains/verify.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/domains/{id}/verify',
  permission: 'domains:write',
  summary: 'Check a domain\'s DNS records',
  description: [
    'Looks up every record of `dns_records` now, through the resolver of `dns.doh_url` (no cached answers), and stores each verdict. The domain becomes `verified` when the required records pass: the DKIM TXT carries exactly this domain\'s `p=` key (whitespace and string splits ignored), and exactly one SPF record (`v=spf1 …`) is published at the domain. A verified domain whose required records are gone becomes `failed` and loses `verified_at`; sends from it are refused naming the record.',
    'Ownership: the first check that finds the DKIM record proves the name for this project (`ownership_proven_at`) unless another project proved it first (then the domain is `failed`, `ownership of <name> was proven by another project`). A proven owner keeps the name when its record is lost later; another project that then publishes its own key and verifies takes it over.',
    'The same check runs every 6 hours by itself. A domain registered before sending existed gets its DKIM key at its first check. When the resolver does not answer the answer is 503 and nothing changes.',
  ].join('\n\n'),
  tags: ['Domains'],
  request: { params: IdParams },
  errors: [404, 503],
  responses: {
    200: { description: 'The domain after the check', content: { 'application/json': { schema: z.object({ domain: DomainSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ domain: await verifyDomain(c.get('db'), c.get('config'), c.get('projectId'), c.req.valid('param').id) }, 200);
