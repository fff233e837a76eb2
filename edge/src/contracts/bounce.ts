import { z } from '@hono/zod-openapi';
import { bounceType } from '@edgemail/schema';
import { Uuid } from './common.js';
import { CursorTimestamp, keysetCursor, keysetQuery, queryParam } from './keyset.js';

export const BOUNCE_TYPES = bounceType.enumValues;
export type BounceTypeName = (typeof BOUNCE_TYPES)[number];
export const BOUNCE_LIMIT_DEFAULT = 50;
export const BOUNCE_LIMIT_MAX = 200;

export const BounceSchema = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  email_id: z.uuid().nullable().openapi({ description: 'The email (email log id) it is about; null once that email was purged' }),
  recipient: z.string().openapi({ example: 'ann@example.org', description: 'The email\'s recipient' }),
  type: z.enum(BOUNCE_TYPES).openapi({ description: '`hard` (the address is bad: suppressed), `soft` (a delay or temporary failure: recorded only), `complaint` (the recipient reported the mail: suppressed)' }),
  source: z.string().openapi({ example: 'dsn', description: '`smtp` (the receiving server refused it during delivery), `dsn` (a delivery status notification came back to the return path), `arf` (a feedback report), `ses` (an SES notification), `simulator` (a simulator address)' }),
  smtp_code: z.number().int().nullable().openapi({ example: 550 }),
  status: z.string().nullable().openapi({ example: '5.1.1', description: 'The enhanced status code' }),
  diagnostic: z.string().nullable().openapi({ example: 'smtp; 550 5.1.1 <ann@example.org>: Recipient address rejected: User unknown', description: 'The server\'s words: a DSN\'s Diagnostic-Code as given, or the reply to the delivery' }),
  remote_mta: z.string().nullable().openapi({ example: 'mx.example.org', description: 'The server that refused it' }),
  feedback_type: z.string().nullable().openapi({ example: 'abuse', description: 'A complaint\'s ARF Feedback-Type' }),
  original_message_id: z.string().nullable().openapi({ example: '<0f8e…@acme.test>', description: 'The Message-ID of the original message, as the report quoted it' }),
  created_at: CursorTimestamp,
}).openapi('Bounce');

export const BounceCursorSchema = keysetCursor('BounceCursor');

export const ListBouncesQuery = keysetQuery('created_at', { max: BOUNCE_LIMIT_MAX, fallback: BOUNCE_LIMIT_DEFAULT }, {
  type: z.enum(BOUNCE_TYPES, { error: 'must be hard, soft or complaint' }).optional().openapi({ ...queryParam('type'), description: 'Only bounces of this type' }),
  recipient: z.string().trim().min(1, 'must not be empty').max(1000, 'must be at most 1000 characters').optional()
    .openapi({ ...queryParam('recipient'), description: 'Only bounces about this address (compared without regard to case)', example: 'ann@example.org' }),
  email_id: Uuid.optional().openapi({ ...queryParam('email_id'), description: 'Only bounces about this email (email log id)' }),
});

export type BounceRecord = z.infer<typeof BounceSchema>;
export type BounceCursor = z.infer<typeof BounceCursorSchema>;
