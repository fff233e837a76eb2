// A domain's open and click tracking (docs/tracking.md): the body of
// `PUT /api/v1/domains/{id}/tracking` and the record both routes answer.
import { z } from '@hono/zod-openapi';
import { normalizeDomainName } from '@edgemail/shared';
import { Timestamp } from './common.js';

export const DomainTrackingSchema = z.object({
  domain_id: z.uuid(),
  opens: z.boolean().openapi({ description: 'Append an open pixel to the HTML of this domain\'s mail (a send\'s own `tracking.opens` overrides it)' }),
  clicks: z.boolean().openapi({ description: 'Rewrite the http(s) links of this domain\'s HTML mail (a send\'s own `tracking.clicks` overrides it)' }),
  host: z.string().nullable().openapi({ example: 'links.acme.example', description: 'The custom tracking host: tracked URLs point at it instead of the service\'s own host. Null: the service\'s.' }),
  host_verified_at: Timestamp.nullable().openapi({ description: 'When its CNAME to the service\'s host was found (it is used only then)' }),
  cname: z.object({
    name: z.string().openapi({ example: 'links.acme.example' }),
    value: z.string().openapi({ example: 'mail.example.com' }),
  }).nullable().openapi({ description: 'The record to publish for `host`: `<host> CNAME <the service\'s host>`; null without a host' }),
}).openapi('DomainTracking');

export type DomainTrackingRecord = z.infer<typeof DomainTrackingSchema>;

export const PutDomainTrackingSchema = z.object({
  opens: z.boolean(),
  clicks: z.boolean(),
  host: z.string().trim()
    .transform((input, ctx) => {
      const result = normalizeDomainName(input);
      if ('problem' in result) {
        ctx.addIssue({ code: 'custom', message: result.problem });
        return z.NEVER;
      }
      return result.name;
    })
    .nullable().optional()
    .openapi({ type: 'string', example: 'links.acme.example', description: 'A name under the domain (`links.<domain>`) published as a CNAME to the service\'s host, checked now through `dns.doh_url`: 400 naming `host` when it is not found. Omitted or null: links point at the service\'s own host.' }),
}).strict().openapi('PutDomainTracking');
