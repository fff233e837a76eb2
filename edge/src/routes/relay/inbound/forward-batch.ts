import type { RouteHandler } from '@hono/zod-openapi';
import { FORWARD_BATCH_MAX_MESSAGES, splitAddress } from '@edgemail/shared';
import { defineRelayRoute } from '../../../http/define-relay-route.js';
import {
  FORWARD_BATCH_CONTENT_TYPE, forwardingBodyLimit, forwardingMetaLimit, InboundBatchForwardedSchema, MESSAGE_LENGTHS_HEADER, META_LENGTHS_HEADER,
} from '../../../contracts/inbound-meta.js';
import { announcedMessages, PieceReader, readForwardedBatch } from '../../../services/inbound-emails/forwarded-batch.js';
import { ingestBatch, type BatchMessage } from '../../../services/inbound-emails/ingest-batch.js';
import { isBounceForward } from '../../../services/delivery/bounces/ingest-report.js';
import { handOverOutbox } from '../../../services/webhook-outbox/hand-over.js';
import { runForwards } from '../../../services/inbound-rules/forward.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/inbound/batch',
  credential: 'node',
  limiter: 'relay_node_inbound',
  // Each message counts as one forward: a batch of 10 is 10 of the node's per-minute limit.
  limiterCount: (c) => announcedMessages(c.req.raw),
  bodyLimit: (config) => forwardingBodyLimit(config['inbound.max_message_size']),
  streamsBody: true,
  summary: 'Forward several received messages at once',
  description: `Up to ${FORWARD_BATCH_MAX_MESSAGES} messages in one body, each stored exactly as \`POST /relay/v1/inbound\` stores one (bytes to R2, then the record and its \`inbound.received\` outbox row), every record of the batch in one statement, before the answer. The body is each message's meta JSON in turn (their byte lengths in \`${META_LENGTHS_HEADER}\`, comma-separated), then each message's raw bytes and attachments in the same order (their lengths in \`${MESSAGE_LENGTHS_HEADER}\`); \`Content-Length\` must be their sum. The answer has one result per message, in body order: \`status\` 200 with the single route's answer, or the status and \`error\` the single route would have given that message (400 permanent; 413 forward it alone; 429 with \`retry_after\`, in seconds). A refused message stores nothing and costs the others nothing. Each message counts as one forward in \`ratelimit.relay_node_inbound_per_minute\`: those past the limit are answered 429 each, the batch 429 when none passes. Limits: the body and the metas together as one forward's; the storage calls of the batch together as one forward's (500): a message past them is answered 413 on its own. A refusal of the batch as a whole (its framing, 408, 415, 5xx) stores nothing new; the node then forwards its messages one by one.`,
  tags: ['Relay'],
  errors: [408, 411, 415],
  request: {
    body: {
      required: true,
      content: {
        // Read by the handler itself as it streams (errors name the piece), so not a zod schema.
        [FORWARD_BATCH_CONTENT_TYPE]: {
          schema: {
            type: 'string',
            format: 'binary',
            description: 'each message\'s meta JSON (as POST /relay/v1/inbound takes it), back to back, then each message\'s raw bytes followed by its attachments\' bytes, in the same order',
          },
        },
      },
    },
  },
  responses: {
    200: { description: 'One result per message', content: { 'application/json': { schema: InboundBatchForwardedSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { entries, rest } = await readForwardedBatch(c.req.raw, { maxMetaBytes: forwardingMetaLimit(c.get('config')['inbound.max_message_size']) });
  const node = c.get('relayNode');
  // The limiter counted the batch's messages: those past what it granted are 429, as each would have been alone.
  const verdict = c.get('rateLimit');
  const granted = verdict?.granted ?? entries.length;
  const retryAfter = verdict ? Math.max(1, Math.ceil((verdict.resetAt - Date.now()) / 1000)) : 0;
  const messages: BatchMessage[] = entries.map((e, i) => {
    const spoolId = e.meta?.spool_id ?? null;
    const refusal = e.refusal
      ? { status: 400, spool_id: spoolId, error: e.refusal.message, ...(e.refusal.fields ? { fields: e.refusal.fields } : {}) }
      : i >= granted ? { status: 429, spool_id: spoolId, error: `rate limit exceeded: ${verdict!.limit} requests per minute`, retry_after: retryAfter } : null;
    return { meta: e.meta, refusal, body: new PieceReader(rest, e.length) };
  });
  // Whatever forward.ts hands ingestMessage besides meta, body and node goes here too, so that a
  // message ingested alone (one no project's domain takes) is treated exactly as by the single route.
  const { results, events, forwards } = await ingestBatch(c.get('db'), c.env.MAIL_STORE, node, messages, { bounces: c.get('config') });
  // Copies that forward rules send (docs/inbound-rules.md): after the answer, the records are committed.
  if (forwards.length) c.executionCtx.waitUntil(runForwards(c.get('db'), c.env.MAIL_STORE, c.get('config'), forwards));
  const byProject = new Map<string, number[]>();
  for (const e of events) byProject.set(e.projectId, [...(byProject.get(e.projectId) ?? []), e.outboxId]);
  for (const [projectId, ids] of byProject) c.executionCtx.waitUntil(handOverOutbox(c.env, projectId, ids));
  for (const [i, r] of results.entries()) {
    if (r.status !== 200 || !('inbound_emails' in r) || r.inbound_emails.length) continue;
    // As the single route says it: nobody to store it for.
    const meta = entries[i]!.meta!;
    if (isBounceForward(meta.rcpt_to, c.get('config'))) continue;
    const domains = [...new Set(meta.rcpt_to.map((a) => splitAddress(a)!.domain.toLowerCase()))];
    console.warn(`inbound ${meta.spool_id} from relay node ${node.id}: no proven domain among ${domains.join(', ')}; nothing stored`);
  }
  return c.json({ results }, 200);
};
