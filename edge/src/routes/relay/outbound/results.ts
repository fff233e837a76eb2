import type { RouteHandler } from '@hono/zod-openapi';
import { defineRelayRoute } from '../../../http/define-relay-route.js';
import { ResultsAnswerSchema, ResultsSchema } from '../../../contracts/relay-outbound.js';
import { reportResults } from '../../../services/delivery/report-results.js';
import type { AppEnv } from '../../../env.js';

/**
 * 100 results with long multi-line replies (up to 4000 characters are kept)
 * outgrow the 64 KiB of chatter bodies; a refused report would make the node
 * drop results it cannot send again, and deliver those recipients twice.
 */
export const RESULTS_BODY_BYTES = 1024 * 1024;

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/outbound/results',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => RESULTS_BODY_BYTES,
  // A remote server's words: a NUL in one reply must not refuse the whole report (the node would deliver its recipients again).
  remoteText: ['results.*.reply', 'results.*.server'],
  summary: 'Report outbound attempts',
  description: 'A result counts only when its recipient is `sending`, leased to this node, at the attempt the result names; any other is answered `stale` and changes nothing (the lease ran out and the recipient was claimed again, or the result was already reported). For those that count, in one transaction: the attempt record; `sent` → `sent` with `email.sent`; `failed` → `failed`, `error_message` = the reply, `email.failed`, and a hard bounce (550/551/553, enhanced code 5.1.x or none) suppresses the address; every 5xx refusal is also a bounce record (source `smtp`: hard as just said, else soft; docs/bounces.md); `deferred` → `queued` again after `outbound.retry_delay` doubled per earlier deferral (at most an hour), or, once the send is older than `outbound.max_age`, `failed` as `expired after <age>: <reply>` with `email.failed`. Replies are kept up to 4000 characters, with NUL removed and unpaired surrogates replaced by U+FFFD (a remote server\'s words are relayed as received). Body limit: 1 MiB.',
  tags: ['Relay'],
  request: { body: { required: true, content: { 'application/json': { schema: ResultsSchema } } } },
  responses: {
    200: { description: 'Which results counted', content: { 'application/json': { schema: ResultsAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const answer = await reportResults({
    env: c.env, db: c.get('db'), config: c.get('config'), node: c.get('relayNode'), waitUntil: (p) => c.executionCtx.waitUntil(p),
  }, c.req.valid('json').results);
  return c.json(answer, 200);
};
