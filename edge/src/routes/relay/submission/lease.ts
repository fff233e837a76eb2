import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { SubmissionAuthSchema, SubmissionLeaseAnswerSchema } from '../../../contracts/relay-submission.js';
import { leaseSubmission } from '../../../services/submission/lease.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/submission/lease',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Lease a submission key\'s state for a short while',
  description: 'A relay node\'s submission listener answers messages itself (250 once spooled) from a lease it renews every `submission.lease_ttl` (2 s by default) while a key is in use: the key judged again exactly as `POST /relay/v1/submission/auth` judges it (the same refusals, `ok: false` with `reason` and `message`), and, when it may submit, its project, sandbox flag, the project\'s verified sending domains and the recipients its plan still allows (`remaining`, the tighter of the hourly and daily windows; null: unlimited). Nothing is reserved: the node subtracts what it accepted and has not handed over, and `POST /relay/v1/submission/batch` checks the limit again under the project\'s send lock. A key revoked or expired stops being leased at once, so a node stops taking its messages within `ttl_ms`. Records the key\'s last use.',
  tags: ['Relay'],
  request: { body: { required: true, content: { 'application/json': { schema: SubmissionAuthSchema } } } },
  responses: {
    200: { description: 'The lease, or why the key may not submit', content: { 'application/json': { schema: SubmissionLeaseAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { token, client_address } = c.req.valid('json');
  const { answer, touch } = await leaseSubmission(c.get('db'), c.get('relayNode'), token, client_address, c.get('config')['submission.lease_ttl']);
  if (touch) c.executionCtx.waitUntil(touch);
  return c.json(answer, 200);
};
