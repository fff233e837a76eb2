import type { RouteHandler } from '@hono/zod-openapi';
import { defineWebhookRoute } from '../../../http/define-webhook-route.js';
import { SesWebhookResultSchema, SnsMessageSchema } from '../../../contracts/ses.js';
import { receiveSnsMessage } from '../../../services/ses/receive.js';
import { handOverOutbox } from '../../../services/webhook-outbox/hand-over.js';
import type { AppEnv } from '../../../env.js';

export const route = defineWebhookRoute({
  method: 'post',
  path: '/webhooks/ses',
  limiter: 'ses_webhook',
  summary: 'Amazon SNS messages about SES mail (bounces, complaints, deliveries)',
  description: [
    'Where an SNS topic that SES publishes to delivers over HTTPS (docs/ses.md). No credential: every message must carry a valid SNS signature',
    '(SignatureVersion 1 or 2, checked against the certificate at `SigningCertURL`, which must be https on `sns.<region>.amazonaws.com` or',
    '`.amazonaws.com.cn` with a `.pem` path; certificates are kept up to 24 hours per isolate; an expired one is refused), come from a topic listed in',
    '`ses.topic_arns` (403 otherwise) and repeat its `Type` in the `x-amz-sns-message-type` header. A `SubscriptionConfirmation` is confirmed',
    'by fetching its `SubscribeURL` (same host rule); an `UnsubscribeConfirmation` is acknowledged; a `Notification` carrying an SES Bounce,',
    'Complaint or Delivery is applied to the email with that Message-ID and recipient: a Permanent bounce is a hard bounce (the email becomes',
    '`bounced`, the address suppressed, `email.bounced` fires), a Transient or Undetermined one a soft bounce (recorded only), a Complaint',
    'suppresses and fires `email.complained`, a Delivery changes nothing. A redelivered notification records once. Counted per client address',
    'in `ratelimit.ses_webhook_per_minute` (429 beyond). Refusals: 400 malformed JSON, not an SNS message, unknown `Type`, header mismatch,',
    'a URL off the allowlist, a `Notification` whose signed `Timestamp` is older than `ses.max_notification_age` (1h: refused as a replay) or more',
    'than 5 minutes in the future; 401 a signature that does not verify or an expired certificate; 403 a topic not allowed; 503 the certificate or',
    'SubscribeURL could not be fetched. A refused message changes nothing.',
  ].join(' '),
  tags: ['Webhooks'],
  request: {
    body: { required: true, content: { 'text/plain': { schema: SnsMessageSchema } } },
  },
  errors: [401, 403, 503],
  responses: {
    200: { description: 'Accepted: what was done', content: { 'application/json': { schema: SesWebhookResultSchema } } },
  },
});

// SNS posts `text/plain`: the body is read as text whatever its type, and parsed by the service.
export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { result, events } = await receiveSnsMessage(c.get('db'), c.get('config'), await c.req.text(), c.req.header('x-amz-sns-message-type'));
  for (const [projectId, ids] of events) c.executionCtx.waitUntil(handOverOutbox(c.env, projectId, ids));
  return c.json(result, 200);
};
