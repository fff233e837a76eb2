import { z } from '@hono/zod-openapi';
import { normalizeDomainName } from './domain-name.js';
import { Timestamp } from './common.js';
import { DKIM_ALGORITHMS } from '../crypto/dkim-keys.js';

export const DOMAIN_STATUSES = ['pending', 'verified', 'failed'] as const;

export const DnsRecordSchema = z.object({
  type: z.enum(['TXT', 'MX']),
  name: z.string().openapi({ example: 'em202611._domainkey.acme.example', description: 'Fully qualified, without the trailing dot' }),
  value: z.string().openapi({
    example: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqh…',
    description: 'What to publish. TXT values longer than 255 characters (RSA keys) are split into several strings by most DNS interfaces; that is fine. MX: `<priority> <host>`.',
  }),
  purpose: z.enum(['dkim', 'spf', 'dmarc', 'mx']).openapi({
    description: '`dkim`: the signing key; `spf`: which hosts may send for the domain; `dmarc`: a suggested policy (`p=none`, reports nothing); `mx`: receiving through the relay nodes (not offered when the public host is an IP address: an MX names a host, never an address).',
  }),
  required: z.boolean().openapi({ description: 'Whether the domain needs it to be verified (and so to send): DKIM and SPF.' }),
  status: z.enum(['pending', 'ok', 'missing', 'mismatch']).openapi({
    description: '`pending`: not checked yet; `ok`; `missing`: nothing of the kind at the name; `mismatch`: something else is there (another DKIM key, two SPF or DMARC records, MX pointing elsewhere).',
  }),
  found: z.array(z.string()).optional().openapi({ description: 'What the last check found at the name (TXT strings joined), when it found something relevant.' }),
}).openapi('DomainDnsRecord');

export const DomainSchema = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  name: z.string().openapi({ example: 'acme.example' }),
  status: z.enum(DOMAIN_STATUSES).openapi({
    description: '`pending` until the required records are found; `verified` while they are (and the name is this project\'s); `failed` when a later check (`POST …/verify` or the periodic one every 6 hours) found them gone, or when another project proved ownership of the name. Only a verified domain may send. `status_reason` says why it is `failed`.',
  }),
  status_reason: z.string().nullable().openapi({
    example: 'ownership of acme.example was proven by another project',
    description: 'Why the domain is `failed`: the required record found gone (`DKIM record em202611._domainkey.acme.example is missing`), or `ownership of <name> was proven by another project`. Null otherwise.',
  }),
  ownership_proven_at: Timestamp.nullable().openapi({
    description: 'When a check first found this domain\'s DKIM record (its own key, which no other project can publish): from then on relay nodes accept mail for the name and it is stored for this project. Null until then: mail to the name is refused with `550 5.1.1`. Kept if the record is lost later (mail keeps arriving; the domain is `failed`), until another project proves the name.',
  }),
  verified_at: Timestamp.nullable().openapi({ description: 'Since when the required records have been found, without interruption; null unless `verified`.' }),
  last_checked_at: Timestamp.nullable(),
  dkim: z.object({
    selector: z.string().openapi({ example: 'em202611' }),
    algorithm: z.enum(DKIM_ALGORITHMS),
  }).nullable().openapi({ description: 'The signing key (its private half is never shown). Null for a domain registered before sending existed, until its first verify makes one.' }),
  dns_records: z.array(DnsRecordSchema),
  created_at: Timestamp,
}).openapi('Domain');

export const CreateDomainSchema = z.object({
  name: z.string()
    .trim()
    .transform((input, ctx) => {
      const result = normalizeDomainName(input);
      if ('problem' in result) {
        ctx.addIssue({ code: 'custom', message: result.problem });
        return z.NEVER;
      }
      return result.name;
    })
    .openapi({
      type: 'string',
      example: 'acme.example',
      description: 'A DNS name of at least two labels; stored lower case without a trailing dot; internationalised names in punycode',
    }),
  dkim_algorithm: z.enum(DKIM_ALGORITHMS, { error: (issue) => `unknown DKIM algorithm ${JSON.stringify(issue.input)}: use rsa or ed25519` })
    .default('rsa')
    .openapi({
      description: '`rsa` (2048 bits, `rsa-sha256`; every receiver checks it) or `ed25519` (`ed25519-sha256`, RFC 8463; smaller, not yet checked by every receiver).',
    }),
}).strict().openapi('CreateDomain');

export type DomainRecord = z.infer<typeof DomainSchema>;
export type DnsRecordView = z.infer<typeof DnsRecordSchema>;
