import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { EmailSchema } from '../../../contracts/email.js';
import { cancelEmail } from '../../../services/emails/cancel.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/emails/{id}/cancel',
  permission: 'emails:write',
  summary: 'Cancel one recipient\'s email before it is sent',
  description: [
    '`id` is one recipient\'s row of the email log (an `emails[].id` of the send answer); to cancel a whole send, cancel each of its recipients.',
    'Only a `queued` email can be canceled: one scheduled with `send_at`, or waiting for its next try after a deferral. It becomes `canceled` and no relay node ever claims it; the answer is its log record.',
    'Any other status (`sending`: a relay node has claimed it; `sent`, `failed`, `suppressed`, `captured`, `canceled`, …) is 409 `email cannot be canceled: it is <status> (…)` and changes nothing; another project\'s or an unknown id is 404 `email not found`.',
    'Atomic against a concurrent claim: either the node gets the email or the cancel does. No webhook event is sent. A canceled email still counts against the plan\'s limits (they count sends when accepted).',
  ].join(' '),
  tags: ['Emails'],
  request: { params: IdParams },
  errors: [404, 409],
  responses: {
    200: { description: 'Canceled', content: { 'application/json': { schema: z.object({ email: EmailSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ email: await cancelEmail(c.get('db'), c.get('projectId'), c.req.valid('param').id) }, 200);
