import type { RouteHandler } from '@hono/zod-openapi';
import { defineRelayRoute } from '../../../http/define-relay-route.js';
import { SubmissionAnswerSchema, SubmissionSchema } from '../../../contracts/relay-submission.js';
import { sendBodyLimit } from '../../api/emails/send-context.js';
import { submitMessage } from '../../../services/submission/submit.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/submission/messages',
  credential: 'node',
  limiter: 'relay_node_inbound',
  // The send routes' limit: the attachments in base64 and the rest.
  bodyLimit: sendBodyLimit.maxOf,
  summary: 'Hand over a message submitted over SMTP',
  description: [
    'A relay node\'s submission listener hands over a message once its DATA is spooled: the envelope, the client\'s address, the key the session authenticated with (judged again) and the message read into the send route\'s fields (From, To and Cc from its headers, naming only envelope recipients; the other envelope recipients as Bcc; subject, text, html, attachments, the custom headers the API keeps).',
    'The fields are validated by the send route\'s schema and go through the same checks in the same transaction as `POST /api/v1/emails/send` (verified From domain, suppressions, plan limits under the project\'s send lock); the rows are written with `origin: smtp`.',
    'Idempotent by `spool_id` (per node): the same id again answers as the first time and writes nothing.',
    'A refusal is answered 200 with `accepted: false` and the SMTP reply (`452 4.7.0 hourly email limit reached (<n> per hour on plan <plan>)`, `550 5.7.1` naming the From domain, `550 5.6.0` naming a field, `554 5.7.8` for a key no longer valid); nothing is written.',
    `Body limit: ${sendBodyLimit.description}.`,
  ].join(' '),
  tags: ['Relay'],
  request: { body: { required: true, content: { 'application/json': { schema: SubmissionSchema } } } },
  responses: {
    200: { description: 'Accepted (committed) or refused with its SMTP reply', content: { 'application/json': { schema: SubmissionAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { answer, touch } = await submitMessage({ db: c.get('db'), store: c.env.MAIL_STORE, config: c.get('config') }, c.get('relayNode'), c.req.valid('json'));
  if (touch) c.executionCtx.waitUntil(touch);
  return c.json(answer, 200);
};
