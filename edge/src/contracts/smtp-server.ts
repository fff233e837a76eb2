// SMTP servers a project relays its mail through, and the platform's shared
// pool (the same record with `project_id` null). The password is write-only.
import { z } from '@hono/zod-openapi';
import { isIp, parseIp } from '@edgemail/shared';
import { integerQuery, Timestamp } from './common.js';

export const SMTP_SECURITY = ['starttls', 'tls', 'none'] as const;
export type SmtpSecurity = (typeof SMTP_SECURITY)[number];
export const SMTP_PROBE_STEPS = ['connect', 'greeting', 'ehlo', 'starttls', 'auth', 'quit'] as const;
export const SMTP_PROBE_TIMEOUT_DEFAULT_MS = 5000;
export const SMTP_PROBE_TIMEOUT_MIN_MS = 100;

const PORT_PROBLEM = 'must be an integer from 1 to 65535';
const CRLF_PROBLEM = 'must not contain CR or LF';

/** `required` for a missing field, else `problem` (zod's own text names JavaScript types). */
const requiredOr = (problem: string) => ({ error: (issue: { input?: unknown }) => (issue.input === undefined ? 'required' : problem) });

const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * The host as stored (lower case, no trailing dot, an IPv6 address without
 * brackets), or the problem with it. A DNS name of letters, digits and
 * hyphens (one label is allowed: `localhost`, a name on the relay nodes'
 * network) or an IPv4/IPv6 address; never a URL, a `host:port` or spaces.
 *
 * @example normalizeSmtpHost('SMTP.Example.com.') // { host: 'smtp.example.com' }
 */
export function normalizeSmtpHost(input: string): { host: string } | { problem: string } {
  if (/[\r\n]/.test(input)) return { problem: CRLF_PROBLEM };
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f]/.test(input)) return { problem: 'must not contain spaces or control characters' };
  if (/[^\x21-\x7e]/.test(input)) return { problem: 'must be ASCII: write an internationalised name in punycode (xn--…)' };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input)) return { problem: 'must be a host name or IP address without a scheme (smtp.example.com)' };
  const text = input.toLowerCase();
  if (!text) return { problem: 'must not be empty' };
  const ip = parseIp(text);
  if (ip && isIp(text)) return { host: ip.kind() === 'ipv6' ? ip.toString() : text.replace(/^\[|\]$/g, '') };
  if (/^[^:]+:\d+$/.test(text) || /^\[.*\]:\d+$/.test(text)) return { problem: 'must not include a port: give it in port' };
  if (text.includes(':') || text.startsWith('[')) return { problem: 'is not a valid IP address' };
  const name = text.replace(/\.$/, '');
  if (name.length > 253) return { problem: 'must be at most 253 characters' };
  const labels = name.split('.');
  for (const label of labels) {
    if (!label) return { problem: 'must not contain an empty label' };
    if (label.length > 63) return { problem: `label "${label.slice(0, 20)}…" is longer than 63 characters` };
    if (!LABEL.test(label)) return { problem: `must be a DNS name or IP address: label "${label}" may hold only letters, digits and inner hyphens` };
  }
  if (/^\d+$/.test(labels.at(-1)!)) return { problem: 'is not a valid IP address' };
  return { host: name };
}

/** A text field that must not smuggle a line into an SMTP command. */
const lineSafe = (max: number) => z.string(requiredOr('must be a string'))
  .min(1, 'must not be empty')
  .max(max, `must be at most ${max} characters`)
  .refine((s) => !/[\r\n]/.test(s), CRLF_PROBLEM);

export const CreateSmtpServerSchema = z.object({
  name: lineSafe(100).transform((s) => s.trim()).refine((s) => s.length > 0, 'must not be empty')
    .openapi({ type: 'string', example: 'Postmark', description: 'A label of yours, 1 to 100 characters' }),
  host: z.string(requiredOr('must be a string')).max(300, 'must be at most 300 characters')
    .transform((input, ctx) => {
      const result = normalizeSmtpHost(input);
      if ('problem' in result) {
        ctx.addIssue({ code: 'custom', message: result.problem });
        return z.NEVER;
      }
      return result.host;
    })
    .openapi({ type: 'string', example: 'smtp.example.com', description: 'A DNS name or an IP address: no scheme, port or spaces. Stored lower case.' }),
  port: z.number(requiredOr(PORT_PROBLEM)).int(PORT_PROBLEM).min(1, PORT_PROBLEM).max(65535, PORT_PROBLEM).default(587)
    .openapi({ example: 587, description: '1 to 65535; 587 when omitted' }),
  security: z.enum(SMTP_SECURITY, requiredOr(`must be one of ${SMTP_SECURITY.join(', ')}`)).default('starttls')
    .openapi({ description: '`starttls` (plain connection upgraded with STARTTLS, which must be offered; the default), `tls` (TLS from the first byte, usually port 465) or `none` (plain text throughout)' }),
  username: lineSafe(255).refine((s) => !s.includes('\0'), 'must not contain NUL').optional()
    .openapi({ type: 'string', example: 'apikey', description: 'AUTH user; omit for a server that needs no login' }),
  password: lineSafe(1000).refine((s) => !s.includes('\0'), 'must not contain NUL').optional()
    .openapi({ type: 'string', example: 'secret', description: 'AUTH password; needs `username`. Stored sealed and never returned (records show `has_password`).' }),
}).strict().superRefine((input, ctx) => {
  if (input.password !== undefined && input.username === undefined) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'requires username' });
  }
}).openapi('CreateSmtpServer');

export const SmtpServerSchema = z.object({
  id: z.uuid(),
  project_id: z.uuid().nullable().openapi({ description: 'The owning project; null for a server of the shared pool' }),
  name: z.string().openapi({ example: 'Postmark' }),
  host: z.string().openapi({ example: 'smtp.example.com' }),
  port: z.number().int().openapi({ example: 587 }),
  security: z.enum(SMTP_SECURITY),
  username: z.string().nullable(),
  has_password: z.boolean().openapi({ description: 'Whether a password is stored (it is never shown)' }),
  created_at: Timestamp,
}).openapi('SmtpServer');

export const SmtpProbeStepSchema = z.object({
  step: z.enum(SMTP_PROBE_STEPS),
  ok: z.boolean(),
  address: z.string().optional().openapi({ example: '203.0.113.25', description: 'Connect step of a project\'s server (private targets not allowed): the address connected to, the one the host check resolved and allowed; the host name stays the TLS name' }),
  reply: z.string().optional().openapi({ example: '250-smtp.example.com\n250-STARTTLS\n250 AUTH PLAIN LOGIN', description: 'The server\'s reply to this step, every line, as received' }),
  error: z.string().optional().openapi({ example: 'the server answered 535, expected 235', description: 'Why the step failed' }),
  duration_ms: z.number().int(),
}).openapi('SmtpProbeStep');

export const SmtpProbeReportSchema = z.object({
  ok: z.boolean().openapi({ description: 'Every step passed' }),
  steps: z.array(SmtpProbeStepSchema).openapi({ description: 'In the order taken; the last one is the failing step when `ok` is false' }),
}).openapi('SmtpProbeReport');

export const SmtpProbeQuery = z.object({
  timeout_ms: integerQuery('timeout_ms', SMTP_PROBE_TIMEOUT_MIN_MS, SMTP_PROBE_TIMEOUT_DEFAULT_MS, SMTP_PROBE_TIMEOUT_DEFAULT_MS)
    .openapi({ description: `How long each step may take, in milliseconds (${SMTP_PROBE_TIMEOUT_MIN_MS} to ${SMTP_PROBE_TIMEOUT_DEFAULT_MS}; ${SMTP_PROBE_TIMEOUT_DEFAULT_MS} when omitted)` }),
});

export type CreateSmtpServerInput = z.infer<typeof CreateSmtpServerSchema>;
export type SmtpServerRecord = z.infer<typeof SmtpServerSchema>;
export type SmtpProbeStep = z.infer<typeof SmtpProbeStepSchema>;
export type SmtpProbeReport = z.infer<typeof SmtpProbeReportSchema>;
