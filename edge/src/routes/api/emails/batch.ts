import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { BatchResultSchema } from '../../../contracts/email.js';
import { IdempotencyHeaders, MAX_BATCH_MESSAGES, SendBatchSchema } from '../../../contracts/send.js';
import { sendMessages } from '../../../services/emails/send.js';
import { replayHeaders, sendBodyLimit, sendContext } from './send-context.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/emails/batch',
  permission: 'emails:write',
  sandboxPermission: 'sandbox:write',
  auditType: 'email.send_batch',
  bodyLimit: sendBodyLimit,
  summary: 'Send up to 100 emails at once',
  description: [
    `1 to ${MAX_BATCH_MESSAGES} messages, each as \`POST /api/v1/emails/send\` takes it, all or nothing: one invalid message is 400 naming \`messages.<i>.<field>\`,`,
    'and the plan\'s limits count every recipient of every message (429 and nothing written when they do not all fit). Written in one transaction; answered in the order given.',
    'A message may name a `template_id` instead of its content, rendered per message; a refusal names the message (`messages.1: missing variable: name (in subject)`).',
    'The body limit is the send route\'s, for the whole batch.',
  ].join(' '),
  tags: ['Emails'],
  request: {
    headers: IdempotencyHeaders,
    body: { required: true, content: { 'application/json': { schema: SendBatchSchema } } },
  },
  errors: [409],
  responses: {
    201: { description: 'Every message accepted', content: { 'application/json': { schema: BatchResultSchema } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const ctx = await sendContext(c, 'emails.batch', c.req.valid('header')['idempotency-key']);
  const items = c.req.valid('json').messages.map((input, i) => ({ input, field: (name: string) => `messages.${i}.${name}` }));
  const answer = await sendMessages<z.infer<typeof BatchResultSchema>>(ctx, items, (messages) => ({ messages }));
  return c.json(answer.body, 201, replayHeaders(answer.replayed));
};
