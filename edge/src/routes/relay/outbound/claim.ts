import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { ClaimAnswerSchema, ClaimSchema } from '../../../contracts/relay-outbound.js';
import { claimJobs } from '../../../services/delivery/claim-jobs.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/outbound/claim',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Claim due outbound recipients',
  description: 'Leases up to `max` due recipients to the node (`FOR UPDATE SKIP LOCKED`: concurrent claims never take one recipient twice) until `lease_until` (`outbound.lease`), counting up their `attempts`, and answers one job per recipient: the message, its attachments in base64, the from-domain\'s DKIM key and the route (the project\'s SMTP server, else the shared pool, else the recipient\'s MX). Due: `queued` and due, or `sending` with its lease run out. A recipient at the simulator domain (`simulator.<public host>`) is settled by the edge instead of handed out (docs/sending.md, "Simulator addresses"). A node that is not installation-wide claims only its own project\'s mail. An answer carries at most about 24 MiB of content (the first job whatever its size). A recipient whose message cannot be DKIM-signed or whose attachment is gone is failed (`email.failed`) instead of handed out.',
  tags: ['Relay'],
  request: { body: { required: true, content: { 'application/json': { schema: ClaimSchema } } } },
  responses: {
    200: { description: 'The jobs (empty when nothing is due)', content: { 'application/json': { schema: ClaimAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const jobs = await claimJobs({
    env: c.env, db: c.get('db'), config: c.get('config'), node: c.get('relayNode'), waitUntil: (p) => c.executionCtx.waitUntil(p),
  }, c.req.valid('json').max);
  return c.json({ jobs }, 200);
};
