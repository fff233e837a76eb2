import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { SendResultSchema, type SendResult } from '../../../contracts/email.js';
import { IdempotencyHeaders, MAX_RECIPIENTS, SendMessageSchema } from '../../../contracts/send.js';
import { sendMessages } from '../../../services/emails/send.js';
import { replayHeaders, sendBodyLimit, sendContext } from './send-context.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/emails/send',
  permission: 'emails:write',
  sandboxPermission: 'sandbox:write',
  auditType: 'email.send',
  bodyLimit: sendBodyLimit,
  summary: 'Send an email',
  description: [
    `One message to 1 to ${MAX_RECIPIENTS} recipients (\`to\`, \`cc\` and \`bcc\` together); each recipient becomes one row of the email log, in the order to, cc, bcc, an address named twice once.`,
    'Content: `subject` with `html` and/or `text`, or `template_id` (with `data` and `language`): the template\'s active version at send time, rendered (docs/template-rendering.md); both ways at once is 400 naming the fields, a template that does not render 422 naming the problem (`missing variable: name (in html)`), another project\'s template 404, a template without an active version 422.',
    'The from domain must be a verified domain of the project. A suppressed recipient gets a row with status `suppressed` and is not counted against the plan\'s limits; the others are `queued` for the relay nodes, or `captured` when a sandbox key sends (a sandbox key needs `sandbox:write` instead of `emails:write`).',
    'Over the plan\'s hourly or daily limit nothing is written and the answer is 429 `hourly email limit reached (<n> per hour on plan <plan>)` (or the daily twin).',
    '`from`, `reply_to` and every `to`, `cc` and `bcc` entry must be exactly one mailbox: a list, a group or `;` is 400 naming the field (`from`, `to.2`); the address headers are composed from the parsed name and address, never from the text given.',
    'CR or LF in the subject, an address, a header name or value, or a filename is 400 naming the field; so is a custom header the service or the servers on the way write (From, Sender, Received, Return-Path, Authentication-Results, Resent-*, ARC-*, …). See docs/sending.md.',
    '`send_at` (RFC 3339 with a time zone, at most 72 hours ahead; past or now is at once) holds the recipients `queued` until then; `POST /api/v1/emails/{id}/cancel` cancels one before a relay node claims it. A `send_at` further ahead, or not a timestamp with a time zone, is 400 naming `send_at`.',
    'Recipients `delivered@`, `bounce@`, `complaint@` and `defer@` (each with an optional `+label`) at `simulator.<host of server.public_url>` (`simulator.localhost` when that host is an IP address) are never delivered: the claim settles them as a receiving server would (250; 250 then a hard bounce; 250 then a complaint; 451 at every try), with the real log, attempts, bounce records, suppressions and webhook events.',
  ].join(' '),
  tags: ['Emails'],
  request: {
    headers: IdempotencyHeaders,
    body: { required: true, content: { 'application/json': { schema: SendMessageSchema } } },
  },
  errors: [409],
  responses: {
    201: { description: 'Accepted (or the first answer again, with `Idempotent-Replayed: true`)', content: { 'application/json': { schema: SendResultSchema } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const ctx = await sendContext(c, 'emails.send', c.req.valid('header')['idempotency-key']);
  const answer = await sendMessages<SendResult>(ctx, [{ input: c.req.valid('json'), field: (name) => name }], ([result]) => result!);
  return c.json(answer.body, 201, replayHeaders(answer.replayed));
};
