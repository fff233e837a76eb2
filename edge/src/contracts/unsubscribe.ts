import { z } from '@hono/zod-openapi';

export const UnsubscribeParams = z.object({
  token: z.string().max(200, 'must be at most 200 characters')
    .openapi({ param: { name: 'token', in: 'path' }, description: 'The signed token of the message\'s `List-Unsubscribe` link' }),
});

/** RFC 8058 section 3.1: the POST body a mailbox provider sends. */
export const OneClickBody = z.object({
  'List-Unsubscribe': z.literal('One-Click', { error: 'must be One-Click (RFC 8058)' }),
}).openapi('OneClickUnsubscribe');

export const UnsubscribedSchema = z.object({
  unsubscribed: z.literal(true),
  stream: z.string(),
}).openapi('Unsubscribed');
