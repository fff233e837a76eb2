// The certificate store's admin bodies and record (docs/certificates.md). No
// record carries a private key: there is no field for one.
import { z } from '@hono/zod-openapi';
import { Timestamp } from './common.js';
import { normalizeSmtpHost } from './smtp-server.js';

/** An operator's name; the service's own (`self-signed`, `acme:<host>`) cannot match it. */
export const CERTIFICATE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** The shared self-signed pair's name (services/certificates/self-signed.ts). */
export const SELF_SIGNED_NAME = 'self-signed';
export const AUTHORITY_DAYS_DEFAULT = 3650;
export const AUTHORITY_DAYS_MAX = 36500;
/** The CA/Browser Forum ceiling TLS clients enforce (spec: listener certificate lifetime). */
export const LEAF_DAYS_MAX = 398;
export const MAX_HOSTS = 100;
/** X.520's upper bound for these attributes (ub-common-name and friends). */
const SUBJECT_FIELD_MAX = 64;
/** PEM text of a certificate with its chain, or of a key: generous, far below the body limit. */
const PEM_MAX = 64 * 1024;

const requiredOr = (problem: string) => ({ error: (issue: { input?: unknown }) => (issue.input === undefined ? 'required' : problem) });

const Name = z.string(requiredOr('must be a string'))
  .regex(CERTIFICATE_NAME, 'must be 1 to 100 letters, digits, dots, hyphens and underscores, starting with a letter or digit')
  .openapi({ example: 'mx1', description: `Unique. 1 to 100 of \`A-Z a-z 0-9 . _ -\`, starting with a letter or digit (no \`/\`, no \`:\`); \`${SELF_SIGNED_NAME}\` is the service's own (409)` });

/** Any stored name in a path: an operator's, or the service's own `self-signed` and `acme:<host>`. */
export const CertificateNameParams = z.object({
  name: z.string().min(1).max(300).openapi({ param: { name: 'name', in: 'path' }, example: 'mx1' }),
});

const wholeDays = (min: number, max: number) => {
  const problem = `must be a whole number of days from ${min} to ${max}`;
  return z.number(requiredOr(problem)).int(problem).min(min, problem).max(max, problem);
};

const subjectField = (name: string) => z.string(requiredOr('must be a string'))
  .min(1, 'must not be empty').max(SUBJECT_FIELD_MAX, `must be at most ${SUBJECT_FIELD_MAX} characters`)
  // eslint-disable-next-line no-control-regex
  .refine((s) => !/[\x00-\x1f\x7f]/.test(s), 'must not contain control characters')
  .optional().openapi({ type: 'string', description: `The subject's ${name}` });

export const SubjectSchema = z.object({
  common_name: subjectField('common name (CN); the authority\'s `name` when omitted'),
  organization: subjectField('organization (O)'),
  unit: subjectField('organizational unit (OU)'),
  country: z.string(requiredOr('must be a string')).regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code (ISO 3166)')
    .transform((s) => s.toUpperCase()).optional().openapi({ type: 'string', example: 'DE', description: 'Two-letter country code (C)' }),
  state: subjectField('state or province (ST)'),
  locality: subjectField('locality (L)'),
}).strict().openapi('CertificateSubject');

export const GenerateAuthoritySchema = z.object({
  name: Name,
  validity_days: wholeDays(1, AUTHORITY_DAYS_MAX).default(AUTHORITY_DAYS_DEFAULT)
    .openapi({ example: 3650, description: `1 to ${AUTHORITY_DAYS_MAX}; ${AUTHORITY_DAYS_DEFAULT} (ten years) when omitted` }),
  subject: SubjectSchema.default({}),
  algorithm: z.string(requiredOr('must be a string')).superRefine((value, ctx) => {
    if (value === 'ed25519') ctx.addIssue({ code: 'custom', message: 'ed25519 is not accepted for an authority: use ecdsa or rsa' });
    else if (value !== 'rsa' && value !== 'ecdsa') ctx.addIssue({ code: 'custom', message: 'must be one of rsa, ecdsa' });
  }).transform((s) => s as 'rsa' | 'ecdsa').default('ecdsa')
    .openapi({ type: 'string', enum: ['rsa', 'ecdsa'], description: '`ecdsa` (P-256, the default) or `rsa` (2048 bits); `ed25519` is refused for an authority' }),
}).strict().openapi('GenerateAuthority');

/**
 * A SAN entry as stored (lower case, no trailing dot, IPv6 compressed), or
 * the problem with it. A wildcard is a whole leftmost label followed by at
 * least two labels (`*.example.com`, not `*.com`, `a.*.example.com` or
 * `*x.example.com`).
 */
export function normalizeCertificateHost(input: string): { host: string } | { problem: string } {
  const wildcard = input.startsWith('*.');
  const rest = wildcard ? input.slice(2) : input;
  if (rest.includes('*')) return { problem: 'a wildcard must be the whole leftmost label (*.example.com)' };
  const result = normalizeSmtpHost(rest);
  if ('problem' in result) return result;
  if (!wildcard) return result;
  if (!/[a-z]/.test(result.host) || result.host.includes(':') || /^[\d.]+$/.test(result.host)) return { problem: 'a wildcard must cover a DNS name, not an IP address' };
  if (result.host.split('.').length < 2) return { problem: 'a wildcard must have at least two labels after it (*.example.com, not *.com)' };
  return { host: `*.${result.host}` };
}

const Host = z.string(requiredOr('must be a string')).max(300, 'must be at most 300 characters').transform((input, ctx) => {
  const result = normalizeCertificateHost(input);
  if ('problem' in result) {
    ctx.addIssue({ code: 'custom', message: result.problem });
    return z.NEVER;
  }
  return result.host;
});

export const GenerateCertificateSchema = z.object({
  name: Name,
  hosts: z.array(Host, requiredOr('must be a list of DNS names or IP addresses'))
    .min(1, 'must list at least one DNS name or IP address').max(MAX_HOSTS, `must list at most ${MAX_HOSTS} names`)
    .transform((hosts) => [...new Set(hosts)])
    .openapi({ type: 'array', items: { type: 'string' }, example: ['mx1.example.net', '*.mx.example.net', '192.0.2.25'], description: `1 to ${MAX_HOSTS} DNS names (a wildcard only as the whole leftmost label, with two labels after it) or IP addresses; each becomes a SAN, the first DNS name the subject CN` }),
  issuer: z.string(requiredOr('must be a string')).min(1, 'must not be empty').max(300, 'must be at most 300 characters')
    .openapi({ example: 'internal-ca', description: 'The name of a stored authority' }),
  algorithm: z.enum(['rsa', 'ecdsa'], requiredOr('must be one of rsa, ecdsa')).default('ecdsa')
    .openapi({ description: '`ecdsa` (P-256, the default) or `rsa` (2048 bits)' }),
  validity_days: wholeDays(1, LEAF_DAYS_MAX).default(LEAF_DAYS_MAX)
    .openapi({ example: 90, description: `1 to ${LEAF_DAYS_MAX}; ${LEAF_DAYS_MAX} when omitted. Never beyond the issuer's end: shortened to it (the record's \`shortened_to_issuer\` says so)` }),
}).strict().openapi('GenerateCertificate');

const Pem = (what: string) => z.string(requiredOr('must be a string')).min(1, 'must not be empty').max(PEM_MAX, `must be at most ${PEM_MAX} characters`)
  .openapi({ type: 'string', description: what });

export const UploadCertificateSchema = z.object({
  name: Name,
  certificate: Pem('The certificate, one PEM block (-----BEGIN CERTIFICATE-----). Intermediates go in `chain`'),
  private_key: Pem('Its private key, unencrypted PEM: PKCS#8 (PRIVATE KEY), PKCS#1 (RSA PRIVATE KEY) or SEC1 (EC PRIVATE KEY). RSA of 2048 bits or more, ECDSA on P-256 or P-384, or Ed25519 (not for an authority). Stored sealed, never returned'),
  chain: z.string(requiredOr('must be a string')).max(PEM_MAX, `must be at most ${PEM_MAX} characters`).optional()
    .openapi({ type: 'string', description: 'Optional intermediates, PEM, in order: the first signed `certificate`, each next signed the one before (a root may end it). Served after the certificate' }),
}).strict().openapi('UploadCertificate');

export const CERTIFICATE_KINDS = ['self_signed', 'uploaded', 'authority', 'issued', 'acme'] as const;

export const CertificateSchema = z.object({
  id: z.uuid(),
  name: z.string().openapi({ example: 'mx1' }),
  kind: z.enum(CERTIFICATE_KINDS).openapi({ description: '`authority` (can issue), `issued` (by one of the authorities here; renewed by the service), `uploaded`, `self_signed` (the shared fallback pair), `acme`' }),
  is_authority: z.boolean(),
  subject: z.string().openapi({ example: 'CN=mx1.example.net' }),
  issuer: z.string().nullable().openapi({ example: 'internal-ca', description: 'The stored authority that issued it (kind `issued`); null otherwise, or once that authority is deleted' }),
  issuer_subject: z.string().openapi({ example: 'CN=Internal CA' }),
  hosts: z.array(z.string()).openapi({ example: ['mx1.example.net'], description: 'Its SAN DNS names and IP addresses' }),
  algorithm: z.enum(['rsa', 'ecdsa', 'ed25519']).nullable(),
  key_size: z.number().int().nullable().openapi({ example: 256, description: 'RSA modulus bits, or the ECDSA curve\'s bits' }),
  serial_number: z.string().openapi({ description: 'Lower-case hex' }),
  fingerprint_sha256: z.string().openapi({ description: 'Lower-case hex SHA-256 of the DER certificate' }),
  not_before: Timestamp.nullable(),
  not_after: Timestamp,
  has_chain: z.boolean().openapi({ description: 'Whether intermediates are stored and served after it (see the PEM route)' }),
  assigned_listeners: z.array(z.string()).openapi({ example: ['inbound'], description: 'The listeners it is assigned to' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}).openapi('Certificate');

/** What generate adds: whether the requested lifetime was cut to the issuer's end. */
export const IssuedCertificateSchema = CertificateSchema.extend({
  shortened_to_issuer: z.boolean().openapi({ description: 'True when `validity_days` would have outlived the issuer: the certificate ends when the issuer does' }),
}).openapi('IssuedCertificate');

export type GenerateAuthorityInput = z.infer<typeof GenerateAuthoritySchema>;
export type GenerateCertificateInput = z.infer<typeof GenerateCertificateSchema>;
export type UploadCertificateInput = z.infer<typeof UploadCertificateSchema>;
export type CertificateRecord = z.infer<typeof CertificateSchema>;
