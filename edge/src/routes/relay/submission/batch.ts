import type { RouteHandler } from '@hono/zod-openapi';
import { SUBMISSION_BATCH_MAX_MESSAGES } from '@edgemail/shared';
import { defineRelayRoute } from '../../../http/define-relay-route.js';
import { SubmissionBatchAnswerSchema, SubmissionBatchSchema, SUBMISSION_BATCH_COUNT_HEADER } from '../../../contracts/relay-submission.js';
import { sendBodyLimit } from '../../api/emails/send-context.js';
import { submitBatch } from '../../../services/submission/batch.js';
import { handOverOutbox } from '../../../services/webhook-outbox/hand-over.js';
import { invalid } from '../../../services/errors.js';
import type { AppEnv } from '../../../env.js';

/** How many messages the batch says it holds (the limiter counts them before the body is read). */
const announced = (header: string | undefined): number => {
  const n = Number(header ?? '1');
  return Number.isInteger(n) && n >= 1 && n <= SUBMISSION_BATCH_MAX_MESSAGES ? n : 1;
};

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/submission/batch',
  credential: 'node',
  limiter: 'relay_node_inbound',
  // Each message counts as one hand-over, as `POST /relay/v1/submission/messages` counts one.
  limiterCount: (c) => announced(c.req.header(SUBMISSION_BATCH_COUNT_HEADER)),
  // Two messages at the send routes' limit: the node puts a message that large in a batch of its own.
  bodyLimit: (config) => 2 * sendBodyLimit.maxOf(config),
  summary: 'Hand over messages a relay node already accepted over SMTP',
  description: [
    `Up to ${SUBMISSION_BATCH_MAX_MESSAGES} messages the node's submission listener answered \`250 2.0.0 Message accepted as <id>\` for, once each was spooled (fsynced) and its key's lease (\`POST /relay/v1/submission/lease\`) allowed it: each with the \`id\` its 250 named, the project and sandbox flag of the lease, the envelope and the send route's fields (as \`POST /relay/v1/submission/messages\` takes them, without the key).`,
    'Each message is keyed by its `id`: one already in the email log answers `replayed` and writes nothing, so a batch sent again after a crash or a lost answer never makes a second email.',
    'The others go through the send route\'s schema and the send\'s checks in one statement per project (verified From domain, suppressions, plan limits under the project\'s send lock), rows written with `origin: smtp` under the message id `id` (`sent`).',
    'A message the edge still refuses (a reason the node\'s lease could not see: a From domain unverified since, the plan\'s limit taken by other sends, a field the schema refuses) is recorded `failed`: its recipients\' rows with the refusal as `error_message` and an `email.failed` event each. Every result ends the node\'s part: it forgets the message.',
    `The header \`${SUBMISSION_BATCH_COUNT_HEADER}\` names how many messages the body holds; each counts as one hand-over in \`ratelimit.relay_node_inbound_per_minute\`. Body limit: twice the send routes' (${sendBodyLimit.description}).`,
  ].join(' '),
  tags: ['Relay'],
  request: { body: { required: true, content: { 'application/json': { schema: SubmissionBatchSchema } } } },
  responses: {
    200: { description: 'One result per message, in order', content: { 'application/json': { schema: SubmissionBatchAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { messages } = c.req.valid('json');
  if (announced(c.req.header(SUBMISSION_BATCH_COUNT_HEADER)) !== messages.length) {
    throw invalid(`${SUBMISSION_BATCH_COUNT_HEADER} must name the number of messages in the body (${messages.length})`, { [SUBMISSION_BATCH_COUNT_HEADER]: 'does not match the body' });
  }
  const { results, events } = await submitBatch({ db: c.get('db'), store: c.env.MAIL_STORE, config: c.get('config') }, c.get('relayNode'), messages);
  for (const [projectId, rows] of events) c.executionCtx.waitUntil(handOverOutbox(c.env, projectId, rows));
  return c.json({ results }, 200);
};
