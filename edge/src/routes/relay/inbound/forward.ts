import type { RouteHandler } from '@hono/zod-openapi';
import { defineRelayRoute } from '../../../http/define-relay-route.js';
import { InboundForwardedSchema } from '../../../schemas/inbound-meta.js';
import { readForwardedParts } from '../../../services/inbound/forwarded-form.js';
import { ingestMessage } from '../../../services/inbound/ingest.js';
import { handOverOutbox } from '../../../services/webhooks/hand-over.js';
import type { AppEnv } from '../../../env.js';

/** Room beside the message for its attachments (at most as large again) and the metadata. */
export const forwardingBodyLimit = (maxMessageSize: number) => 2 * maxMessageSize + 1_048_576;

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/inbound',
  credential: 'node',
  limiter: 'relay_node_inbound',
  bodyLimit: (config) => forwardingBodyLimit(config['inbound.max_message_size']),
  summary: 'Forward one received message',
  description: 'For each project owning a recipient domain: raw bytes and attachments to R2, then the record and its `inbound.received` outbox row in one transaction, handed to the webhook dispatcher after the answer. A spool id already stored is not stored again (`duplicate: true` when every record existed). 400 is permanent (the node dead-letters the message); anything else is retried. Body limit: `2 × inbound.max_message_size + 1 MiB`.',
  tags: ['Relay'],
  request: {
    body: {
      required: true,
      content: {
        'multipart/form-data': {
          // Read by the handler itself (parts are bytes, and errors name the part), so not a zod schema.
          schema: {
            type: 'object',
            required: ['meta', 'raw'],
            properties: {
              meta: { type: 'string', description: 'JSON: spool_id, received_at, client_ip, helo, mail_from, rcpt_to, size, auth, dmarc_policy, smtp_rejected, parsed (docs/relay-protocol.md)' },
              raw: { type: 'string', format: 'binary', description: 'The message as spooled, a file part (message/rfc822)' },
            },
            additionalProperties: { type: 'string', format: 'binary', description: '`attachment.<i>`: the bytes of attachment i, zero-based, in meta.parsed.attachments order' },
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
  const parts = await readForwardedParts(c.req);
  const node = c.get('relayNode');
  const { events, ...result } = await ingestMessage(c.get('db'), c.env.MAIL_STORE, { ...parts, node });
  for (const e of events) c.executionCtx.waitUntil(handOverOutbox(c.env, e.projectId, [e.outboxId]));
  if (!result.inbound_emails.length) {
    // Nobody to store it for: the domains were removed after the node accepted the mail.
    const domains = [...new Set(parts.meta.rcpt_to.map((a) => a.slice(a.lastIndexOf('@') + 1).toLowerCase()))];
    console.warn(`inbound ${parts.meta.spool_id} from relay node ${node.id}: no registered domain among ${domains.join(', ')}; nothing stored`);
  }
  return c.json(result, 200);
};
