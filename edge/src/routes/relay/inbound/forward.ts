import type { RouteHandler } from '@hono/zod-openapi';
import { splitAddress } from '@edgemail/shared';
import { defineRelayRoute } from '../../../http/define-relay-route.js';
import { FORWARD_CONTENT_TYPE, forwardingBodyLimit, forwardingMetaLimit, InboundForwardedSchema, META_LENGTH_HEADER } from '../../../contracts/inbound-meta.js';
import { readForwardedBody } from '../../../services/inbound-emails/forwarded-body.js';
import { ingestMessage } from '../../../services/inbound-emails/ingest.js';
import { isBounceForward } from '../../../services/delivery/bounces/ingest-report.js';
import { handOverOutbox } from '../../../services/webhook-outbox/hand-over.js';
import { runForwards } from '../../../services/inbound-rules/forward.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/inbound',
  credential: 'node',
  limiter: 'relay_node_inbound',
  bodyLimit: (config) => forwardingBodyLimit(config['inbound.max_message_size']),
  streamsBody: true,
  summary: 'Forward one received message',
  description: `For each project owning a recipient domain: raw bytes and attachments streamed to R2, then the record and its \`inbound.received\` outbox row in one transaction, handed to the webhook dispatcher after the answer. A spool id already stored is not stored again (\`duplicate: true\` when every record existed). The body is the meta JSON (its byte length in \`${META_LENGTH_HEADER}\`), then the raw message (\`meta.size\` bytes), then each attachment (\`meta.parsed.attachments[i].size\` bytes); \`Content-Length\` must be their sum. 400 is permanent (the node dead-letters the message); 413 makes the node forward the raw message alone; anything else is retried. Limits: the body \`2 × inbound.max_message_size + 1 MiB\`, the meta \`inbound.max_message_size + 1 MiB\` and at most 6 MiB. At most 100 attachments are stored per message (and 500 R2 calls per forward): a message with more is stored \`failed\` with its raw message only.`,
  tags: ['Relay'],
  errors: [408, 411, 415],
  request: {
    body: {
      required: true,
      content: {
        // Read by the handler itself as it streams (errors name the piece), so not a zod schema.
        [FORWARD_CONTENT_TYPE]: {
          schema: {
            type: 'string',
            format: 'binary',
            description: 'meta JSON (spool_id, received_at, client_ip, helo, mail_from, rcpt_to, size, auth, dmarc_policy, smtp_rejected, spam, spam_rejected, parsed: docs/relay-protocol.md), then the raw message as spooled, then each attachment\'s bytes in meta.parsed.attachments order, back to back',
          },
        },
      },
    },
  },
  responses: {
    200: { description: 'Stored (or already stored)', content: { 'application/json': { schema: InboundForwardedSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { meta, rest } = await readForwardedBody(c.req.raw, { maxMetaBytes: forwardingMetaLimit(c.get('config')['inbound.max_message_size']) });
  const node = c.get('relayNode');
  const { events, forwards, ...result } = await ingestMessage(c.get('db'), c.env.MAIL_STORE, { meta, body: rest, node, bounces: c.get('config') });
  // Copies that forward rules send (docs/inbound-rules.md): after the answer, the records are committed.
  if (forwards?.length) c.executionCtx.waitUntil(runForwards(c.get('db'), c.env.MAIL_STORE, c.get('config'), forwards));
  for (const e of events) c.executionCtx.waitUntil(handOverOutbox(c.env, e.projectId, [e.outboxId]));
  // A report to the bounce domain is never stored as inbound mail; ingest logged what became of it.
  if (!result.inbound_emails.length && !isBounceForward(meta.rcpt_to, c.get('config'))) {
    // Nobody to store it for: the domains were removed (or lost to another project) after the node
    // accepted the mail, or the node forwarded mail for names no project proved.
    const domains = [...new Set(meta.rcpt_to.map((a) => splitAddress(a)!.domain.toLowerCase()))];
    console.warn(`inbound ${meta.spool_id} from relay node ${node.id}: no proven domain among ${domains.join(', ')}; nothing stored`);
  }
  return c.json(result, 200);
};
