import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { ClaimAnswerSchema, ClaimSchema } from '../../../contracts/relay-outbound.js';
import { claimDue } from '../../../services/emails/claim.js';
import { buildJobs } from '../../../services/emails/jobs.js';
import { failClaimed, releaseClaimed } from '../../../services/emails/unclaim.js';
import { settleSimulated, splitSimulated } from '../../../services/emails/simulator.js';
import { handOverOutbox } from '../../../services/webhook-outbox/hand-over.js';
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
  const db = c.get('db');
  const config = c.get('config');
  const node = c.get('relayNode');
  const { rows: claimed, pool } = await claimDue(db, config, node, c.req.valid('json').max);
  if (!claimed.length) return c.json({ jobs: [] }, 200);

  // Simulator addresses are settled here, never handed out (services/emails/simulator.ts). A failure
  // to settle them returns them to the queue and does not hold up the real jobs of this claim.
  const { domain, simulated, real: rows } = splitSimulated(config, claimed);
  try {
    for (const events of await settleSimulated(db, config, node.id, domain, simulated)) {
      for (const [projectId, ids] of events) c.executionCtx.waitUntil(handOverOutbox(c.env, projectId, ids));
    }
  } catch (e) {
    console.error(`outbound: simulator addresses not settled, returned to the queue: ${e instanceof Error ? e.message : String(e)}`);
    await releaseClaimed(db, config, node.id, simulated.map((s) => s.row.id));
  }
  if (!rows.length) return c.json({ jobs: [] }, 200);

  const { jobs, failures, released } = await buildJobs(config, c.env.MAIL_STORE, rows, pool);
  for (const r of released) console.warn(`outbound ${r.id}: returned to the queue, no job this time: ${r.problem}`);
  // `detail` is the operator's account (the shared pool's server and seal error); the tenant's record gets `problem`.
  for (const f of failures) console.warn(`outbound ${f.id}: failed at the claim: ${f.detail ?? f.problem}`);
  const [events] = await Promise.all([failClaimed(db, node.id, failures), releaseClaimed(db, config, node.id, released.map((r) => r.id))]);
  for (const [projectId, ids] of events) c.executionCtx.waitUntil(handOverOutbox(c.env, projectId, ids));
  return c.json({ jobs }, 200);
};
