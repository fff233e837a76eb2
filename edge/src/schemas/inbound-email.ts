import { z } from '@hono/zod-openapi';
import { integerQuery, Timestamp, Uuid } from './common.js';

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

/** A timestamp that may carry microseconds, so that it can be sent back as `before` exactly. */
const CursorTimestamp = z.string().openapi({
  format: 'date-time',
  example: '2026-11-26T02:00:00.000Z',
  description: 'Milliseconds, or microseconds when the stored value has them; send it back unchanged as `before`',
});

export const InboundEmailSchema = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  domain_id: z.uuid().nullable().openapi({ description: 'The registered domain the mail arrived for; null once that domain is deleted' }),
  message_id: z.string().openapi({ example: '<abc@example.org>' }),
  sender: z.string().openapi({ example: 'ann@example.org' }),
  recipients: z.array(z.string()),
  subject: z.string(),
  text_body: z.string(),
  html_body: z.string(),
  headers: z.record(z.string(), z.string()),
  attachments: z.array(InboundAttachmentSchema).openapi({ description: 'Metadata only; the bytes are at `…/attachments/{idx}`' }),
  auth: InboundAuthSchema,
  has_raw: z.boolean(),
  size: z.number().int(),
  status: z.enum(INBOUND_STATUSES),
  status_reason: z.string().nullable().openapi({ description: 'Why a message is `rejected` or `failed`; null when `received`', example: 'sender suppressed' }),
  received_at: CursorTimestamp,
  created_at: Timestamp,
}).openapi('InboundEmail');

export const InboundCursorSchema = z.object({
  before: CursorTimestamp,
  before_id: z.uuid(),
}).openapi('InboundCursor');

const queryParam = (name: string) => ({ param: { name, in: 'query' as const } });

export const ListInboundQuery = z.object({
  status: z.enum(INBOUND_STATUSES, { error: 'must be received, rejected or failed' }).optional().openapi(queryParam('status')),
  limit: integerQuery('limit', 1, INBOUND_LIMIT_MAX, INBOUND_LIMIT_DEFAULT),
  before: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).optional()
    .openapi({ ...queryParam('before'), description: '`received_at` of the last row seen; send with `before_id`' }),
  before_id: Uuid.optional().openapi({ ...queryParam('before_id'), description: 'id of that row; send with `before`' }),
}).superRefine((q, ctx) => {
  // Either alone would skip or repeat rows that share a received_at across the page boundary.
  if (q.before_id !== undefined && q.before === undefined) ctx.addIssue({ code: 'custom', path: ['before'], message: 'required with before_id' });
  if (q.before !== undefined && q.before_id === undefined) ctx.addIssue({ code: 'custom', path: ['before_id'], message: 'required with before' });
});

export type InboundEmailRecord = z.infer<typeof InboundEmailSchema>;
export type InboundStatus = (typeof INBOUND_STATUSES)[number];
export type InboundCursor = z.infer<typeof InboundCursorSchema>;
