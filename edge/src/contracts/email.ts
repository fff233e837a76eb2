// The email log: one record per recipient of a sent message (docs/sending.md,
// "The email log"), its detail, the send answers and the usage answer.
import { z } from '@hono/zod-openapi';
import { integerQuery, Timestamp, Uuid } from './common.js';
import { CursorTimestamp, keysetCursor, keysetQuery, queryParam } from './keyset.js';

export const EMAIL_STATUSES = ['queued', 'sending', 'sent', 'failed', 'suppressed', 'captured', 'bounced', 'complained', 'canceled'] as const;
export const RECIPIENT_KINDS = ['to', 'cc', 'bcc'] as const;
export const EMAILS_LIMIT_DEFAULT = 50;
export const EMAILS_LIMIT_MAX = 200;

export const EmailSchema = z.object({
  id: z.uuid().openapi({ description: 'This recipient\'s row: `data.id` of its `email.*` webhook events' }),
  message_id: z.uuid().openapi({ description: 'The send it belongs to (`message_id` of the send answer); shared by its recipients' }),
  project_id: z.uuid(),
  from: z.string().openapi({ example: 'Acme <news@acme.test>' }),
  recipient: z.string().openapi({ description: 'This row\'s bare address (domain lower case)', example: 'ann@example.org' }),
  kind: z.enum(RECIPIENT_KINDS).openapi({ description: 'Which list of the send named the recipient' }),
  to: z.array(z.string()).openapi({ description: 'The message\'s To header, as given' }),
  cc: z.array(z.string()).openapi({ description: 'The message\'s Cc header, as given' }),
  subject: z.string(),
  status: z.enum(EMAIL_STATUSES),
  attempts: z.number().int().openapi({ description: 'Delivery attempts so far' }),
  error_message: z.string().nullable().openapi({ description: 'Why it failed or was not sent: the receiving server\'s reply, or `recipient is suppressed (<reason>)` (the suppression\'s reason)' }),
  smtp_reply: z.string().nullable().openapi({ description: 'The receiving server\'s last reply' }),
  node_id: z.uuid().nullable().openapi({ description: 'The relay node that delivered it (or made the last attempt)' }),
  tags: z.array(z.string()),
  headers: z.record(z.string(), z.string()).openapi({ description: 'The custom headers of the send, as given' }),
  sandbox: z.boolean().openapi({ description: 'Sent with a sandbox key: captured, never delivered' }),
  origin: z.enum(['api', 'smtp', 'test', 'system', 'forward']).openapi({ description: 'How the message came in: `api` (the send routes), `smtp` (SMTP submission on a relay node, docs/submission.md), `test` (a template\'s send-test, docs/template-rendering.md), `forward` (an inbound rule\'s forward of a received message, docs/inbound-rules.md) or `system` (the service\'s own mail: invitations and password resets, in the system-mail project only, docs/console.md)' }),
  stream: z.string().openapi({ description: 'The message stream the send named (docs/sending.md, "Streams"): `transactional` (the default), `broadcast` or a project-defined one', example: 'transactional' }),
  send_at: Timestamp.nullable().openapi({ description: '`send_at` of a scheduled send, as given (null when not scheduled): not delivered before it' }),
  created_at: CursorTimestamp,
  sent_at: Timestamp.nullable(),
}).openapi('Email');

export const EmailAttemptSchema = z.object({
  attempt: z.number().int(),
  outcome: z.enum(['sent', 'deferred', 'failed']),
  smtp_code: z.number().int().nullable().openapi({ description: 'null when no SMTP answer came' }),
  reply: z.string(),
  server: z.string().nullable().openapi({ example: 'mx.example.org:25' }),
  node_id: z.uuid().nullable(),
  started_at: Timestamp,
  duration_ms: z.number().int(),
}).openapi('EmailAttempt');

export const EmailDetailSchema = EmailSchema.extend({
  message_id_header: z.string().openapi({ description: 'The RFC 5322 Message-ID the message carries', example: '<0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11@acme.test>' }),
  reply_to: z.array(z.string()),
  text: z.string().nullable(),
  html: z.string().nullable(),
  attachments: z.array(z.object({ filename: z.string(), content_type: z.string(), size: z.number().int() }))
    .openapi({ description: 'Metadata; the bytes are at `/api/v1/emails/{id}/attachments/{idx}`' }),
  template_id: z.uuid().nullable().openapi({ description: 'The template a template send rendered (null for a send with its own content); kept after the template is deleted' }),
  template_version_id: z.uuid().nullable().openapi({ description: 'The version of it the send rendered: the active one at send time, or the one a send-test named' }),
  delivery_attempts: z.array(EmailAttemptSchema).openapi({ description: 'Every attempt a relay node reported, oldest first' }),
}).openapi('EmailDetail');

export const EmailCursorSchema = keysetCursor('EmailCursor');

export const SendResultSchema = z.object({
  message_id: z.uuid(),
  emails: z.array(EmailSchema).openapi({ description: 'One record per recipient, in the order to, cc, bcc' }),
}).openapi('SendResult');

export const BatchResultSchema = z.object({ messages: z.array(SendResultSchema) }).openapi('BatchResult');

const LimitWindow = z.object({
  limit: z.number().int().openapi({ description: 'The plan\'s limit; 0 is unlimited' }),
  used: z.number().int().openapi({ description: 'Rows of the email log in the trailing window, suppressed ones not counted' }),
  remaining: z.number().int().nullable().openapi({ description: 'null when unlimited' }),
});

export const UsageSchema = z.object({
  plan: z.object({ id: z.uuid(), name: z.string() }).nullable().openapi({ description: 'null: the project has no plan, and no limits' }),
  hour: LimitWindow,
  day: LimitWindow,
  notices: z.array(z.object({
    code: z.enum(['complaint_rate_over_threshold']),
    message: z.string(),
    since: Timestamp.openapi({ description: 'When the project crossed the threshold' }),
    complaint_rate: z.number().openapi({ description: 'Complaints per delivered email over the trailing 7 days (0.004 = 0.4%)' }),
    threshold: z.number().openapi({ description: '`sending.complaint_threshold_basis_points` as a rate (0.003 = 0.3%)' }),
  })).openapi({ description: 'What the project should act on: while its complaint rate is over the bulk sender threshold (docs/analytics.md, "Sender health"), a `complaint_rate_over_threshold` notice. Empty when all is well.' }),
}).openapi('Usage');

const RFC3339 = z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' });

export const ListEmailsQuery = keysetQuery('created_at', { max: EMAILS_LIMIT_MAX, fallback: EMAILS_LIMIT_DEFAULT }, {
  status: z.enum(EMAIL_STATUSES, { error: `must be one of ${EMAIL_STATUSES.join(', ')}` }).optional().openapi(queryParam('status')),
  recipient: z.string().min(1, 'must not be empty').max(1000, 'must be at most 1000 characters').optional()
    .openapi({ ...queryParam('recipient'), description: 'A bare address; case-insensitive, exact' }),
  tag: z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters').optional()
    .openapi({ ...queryParam('tag'), description: 'Rows of sends carrying this tag' }),
  since: RFC3339.optional().openapi({ ...queryParam('since'), description: '`created_at` at or after this' }),
  until: RFC3339.optional().openapi({ ...queryParam('until'), description: '`created_at` before this' }),
});

export type EmailRecord = z.infer<typeof EmailSchema>;
export type EmailDetail = z.infer<typeof EmailDetailSchema>;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];
export type RecipientKind = (typeof RECIPIENT_KINDS)[number];
export type EmailCursor = z.infer<typeof EmailCursorSchema>;
export type ListEmailsInput = z.infer<typeof ListEmailsQuery>;
export type SendResult = z.infer<typeof SendResultSchema>;
export type Usage = z.infer<typeof UsageSchema>;
