import { z } from '@hono/zod-openapi';
import { integerQuery, Timestamp, Uuid } from './common.js';
import { CursorTimestamp, keysetCursor, keysetQuery, queryParam } from './keyset.js';

export const INBOUND_STATUSES = ['received', 'rejected', 'failed'] as const;
export const INBOUND_LIMIT_DEFAULT = 50;
export const INBOUND_LIMIT_MAX = 200;

export const InboundAttachmentSchema = z.object({
  filename: z.string(),
  content_type: z.string().openapi({ example: 'application/pdf' }),
  size: z.number().int(),
}).openapi('InboundAttachment');

export const InboundAuthSchema = z.object({
  spf: z.string().openapi({ example: 'pass' }),
  dkim: z.string().openapi({ example: 'pass' }),
  dmarc: z.string().openapi({ example: 'pass' }),
  aligned: z.boolean().openapi({ description: 'The field to act on: DMARC identifier alignment holds' }),
  client_ip: z.string().openapi({ example: '203.0.113.9' }),
}).openapi('InboundAuth');

export const InboundSpamSchema = z.object({
  score: z.number().openapi({ description: 'rspamd\'s score: the higher, the likelier spam', example: 2.4 }),
  required_score: z.number().nullable().openapi({ description: 'The score at which rspamd itself (its own configuration) would reject; the project\'s thresholds are what the service acts on', example: 15 }),
  action: z.string().openapi({ description: 'rspamd\'s action by its own thresholds: `no action`, `greylist`, `add header`, `rewrite subject`, `soft reject` or `reject`', example: 'no action' }),
  symbols: z.array(z.string()).openapi({ description: 'The rules that matched, heaviest first (at most 200)', example: ['MIME_HTML_ONLY', 'RCVD_COUNT_ZERO'] }),
  marked: z.boolean().openapi({ description: 'The score reached the project\'s `mark_score` (or its `reject_score`, for a message accepted because another recipient\'s project did not refuse it): `PUT /api/v1/project/inbound-spam`' }),
}).openapi('InboundSpam', { description: 'rspamd\'s verdict, when the relay node asked one (docs/inbound.md, Spam scoring)' });

export const InboundEmailSchema = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  domain_id: z.uuid().nullable().openapi({ description: 'The registered domain the mail arrived for; null once that domain is deleted' }),
  message_id: z.string().nullable().openapi({ description: 'The message\'s `Message-ID` header value; null when it has none (or could not be parsed)', example: '<abc@example.org>' }),
  sender: z.string().openapi({ example: 'ann@example.org' }),
  recipients: z.array(z.string()),
  subject: z.string(),
  text_body: z.string(),
  html_body: z.string(),
  stripped_text: z.string().openapi({
    description: 'The reply without its quoted history and signature (Gmail, Outlook, Apple Mail, Thunderbird, plain `>` quoting; "On … wrote:" lines in English, German, French, Spanish, Dutch, Portuguese and more), from `text_body`, or from `html_body` when the message has no text part; the first 16,384 characters are looked at. `""` for a message without text, and for records stored before it was computed (docs/inbound.md, Reply stripping)',
    example: 'Sounds good, see you at noon.',
  }),
  stripped_signature: z.string().nullable().openapi({
    description: 'The signature block taken off `stripped_text` ("-- " and what follows, "Sent from my iPhone", a sign-off such as "Best regards," and the lines below it); null when none was found',
    example: 'Best regards,\nAnn',
  }),
  headers: z.record(z.string(), z.union([z.string(), z.array(z.string())])).openapi({
    description: 'Top-level header name (lower case) → its value, unfolded and decoded: a string for a header that occurs once, an array of strings in the message\'s order (the top one first) for one that occurs more than once (`received`, the newest hop first)',
    example: { subject: 'Hello', received: ['from mx.example.org by mx.acme.test; …', 'from client by mx.example.org; …'] },
  }),
  attachments: z.array(InboundAttachmentSchema).openapi({ description: 'Metadata only; the bytes are at `…/attachments/{idx}`' }),
  auth: InboundAuthSchema,
  spam: InboundSpamSchema.nullable().openapi({ description: 'rspamd\'s verdict; null when the message was not scored (the node has no rspamd, or rspamd did not answer in time: such mail is stored unscored, never lost)' }),
  has_raw: z.boolean(),
  size: z.number().int(),
  status: z.enum(INBOUND_STATUSES),
  status_reason: z.string().nullable().openapi({ description: 'Why a message is `rejected` or `failed`; for a `received` one that a `forward` routing rule decided, what became of the forward (docs/inbound-rules.md, "Forward"); otherwise null when `received`', example: 'sender suppressed' }),
  received_at: CursorTimestamp,
  created_at: Timestamp,
}).openapi('InboundEmail');

export const InboundCursorSchema = keysetCursor('InboundCursor');


export const ListInboundQuery = keysetQuery('received_at', { max: INBOUND_LIMIT_MAX, fallback: INBOUND_LIMIT_DEFAULT }, {
  status: z.enum(INBOUND_STATUSES, { error: 'must be received, rejected or failed' }).optional().openapi(queryParam('status')),
});

export type InboundEmailRecord = z.infer<typeof InboundEmailSchema>;
export type InboundStatus = (typeof INBOUND_STATUSES)[number];
export type InboundCursor = z.infer<typeof InboundCursorSchema>;
