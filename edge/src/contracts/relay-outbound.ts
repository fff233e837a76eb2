// Bodies of the outbound relay routes (docs/sending.md, "Relay protocol:
// outbound"): the claim and its jobs, the results and their verdict. The node
// side reads and writes exactly these shapes (relay-node/src/protocol.ts).
// Unknown keys are ignored, so a newer node can add some.
import { z } from '@hono/zod-openapi';
import { Timestamp, Uuid } from './common.js';

/** Most jobs one claim asks for, and most results one report carries. */
export const MAX_CLAIM = 100;
export const MAX_RESULTS = 100;

/** Longest reply and server name stored; longer ones are cut (a refusal would lose the result). */
export const MAX_REPLY_CHARS = 4000;
const MAX_SERVER_CHARS = 300;

/** PostgreSQL text cannot hold U+0000; cut to `max` rather than refuse. */
const storedText = (max: number) => z.string().transform((s) => s.replace(/\u0000/g, '').slice(0, max));

export const ClaimSchema = z
  .object({
    max: z.number().int('must be an integer').min(1, 'must be from 1 to 100').max(MAX_CLAIM, 'must be from 1 to 100')
      .openapi({ description: 'How many recipients the node can take now (its free delivery slots)', example: 10 }),
  })
  .openapi('OutboundClaim');

const OutboundAttachmentSchema = z.object({
  filename: z.string(),
  content_type: z.string(),
  content_base64: z.string().openapi({ description: 'The bytes, base64 (no line breaks)' }),
});

const OutboundMessageSchema = z.object({
  message_id: z.string().openapi({ example: '<0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11@acme.test>' }),
  date: Timestamp.openapi({ description: 'The send\'s created_at: the Date header' }),
  from: z.string().openapi({ example: 'Acme <news@acme.test>' }),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  reply_to: z.array(z.string()),
  subject: z.string(),
  text: z.string().nullable(),
  html: z.string().nullable(),
  headers: z.record(z.string(), z.string()).openapi({ description: 'Custom headers, name → value' }),
  attachments: z.array(OutboundAttachmentSchema),
}).openapi('OutboundMessage', { description: 'Headers and content; never a Bcc header (blind recipients are in the envelope only)' });

const OutboundDkimSchema = z.object({
  domain: z.string(),
  selector: z.string(),
  algorithm: z.enum(['rsa', 'ed25519']),
  private_key_pem: z.string().openapi({ description: 'PKCS#8 PEM, unsealed for this job' }),
}).openapi('OutboundDkim');

const OutboundRouteSchema = z.union([
  z.object({ kind: z.literal('mx'), domain: z.string().openapi({ description: 'The recipient\'s domain' }) }),
  z.object({
    kind: z.literal('smtp'),
    source: z.enum(['project', 'pool']),
    host: z.string(),
    port: z.number().int(),
    security: z.enum(['starttls', 'tls', 'none']),
    username: z.string().nullable(),
    password: z.string().nullable(),
  }),
]).openapi('OutboundRoute', { description: 'The project\'s SMTP server if it has one, else one of the shared pool\'s (at random), else the recipient\'s MX' });

export const OutboundJobSchema = z.object({
  email_id: z.uuid().openapi({ description: 'The recipient row' }),
  attempt: z.number().int().openapi({ description: 'Number of this attempt (counted up at the claim); the result must carry it' }),
  lease_until: Timestamp.openapi({ description: 'The recipient is this node\'s until then; after it, another claim may take it' }),
  envelope: z.object({
    from: z.string().openapi({ description: 'The bounce address: the bare from address', example: 'news@acme.test' }),
    to: z.string().openapi({ description: 'This one recipient', example: 'ann@example.org' }),
  }),
  message: OutboundMessageSchema,
  dkim: OutboundDkimSchema.nullable().openapi({ description: 'Always set today: a recipient whose message cannot be signed is failed at the claim, never handed out' }),
  route: OutboundRouteSchema,
}).openapi('OutboundJob');

export const ClaimAnswerSchema = z.object({
  jobs: z.array(OutboundJobSchema).openapi({ description: 'Empty when nothing is due' }),
}).openapi('OutboundClaimAnswer');

export const OutboundResultSchema = z.object({
  email_id: Uuid,
  attempt: z.number().int('must be an integer').min(1, 'must be at least 1'),
  outcome: z.enum(['sent', 'deferred', 'failed']).openapi({ description: '2xx | 4xx or no answer | 5xx' }),
  smtp_code: z.number().int('must be an integer').min(100, 'must be an SMTP reply code').max(599, 'must be an SMTP reply code').nullable()
    .openapi({ description: 'null when no SMTP answer came', example: 250 }),
  reply: storedText(MAX_REPLY_CHARS).openapi({ type: 'string', description: `The server's reply text, or why no answer came (cut to ${MAX_REPLY_CHARS} characters)` }),
  server: storedText(MAX_SERVER_CHARS).nullable().openapi({ type: 'string', example: 'mx.example.org:25' }),
  started_at: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }),
  duration_ms: z.number().int('must be an integer').min(0, 'must not be negative').max(2_147_483_647, 'is too large'),
}).openapi('OutboundResult');

export type OutboundResultInput = z.infer<typeof OutboundResultSchema>;

export const ResultsSchema = z
  .object({
    results: z.array(OutboundResultSchema).min(1, 'must have at least one result').max(MAX_RESULTS, 'must have at most 100 results'),
  })
  .openapi('OutboundResults');

export const ResultsAnswerSchema = z.object({
  accepted: z.array(z.uuid()).openapi({ description: 'Recorded: the recipient moved on (sent, failed, or queued again)' }),
  stale: z.array(z.uuid()).openapi({ description: 'The node no longer holds that lease (expired and claimed again, or already reported): nothing changed' }),
}).openapi('OutboundResultsAnswer');
