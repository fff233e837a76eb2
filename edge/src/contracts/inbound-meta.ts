// The body of `POST /relay/v1/inbound` (docs/relay-protocol.md): the meta,
// what the relay node learnt of one message at the SMTP door, then the raw
// message and its attachments back to back. The meta's schema, framing and
// limits are the shared contract (shared/src/relay-protocol/inbound-meta.ts,
// inbound-forward.ts): the OpenAPI document shows the body as binary, so the
// meta needs no metadata here; the answer is named and described.
import { z } from '@hono/zod-openapi';
import { ForwardAnswer, ForwardBatchAnswer, InboundMeta as SharedInboundMeta } from '@edgemail/shared';

export {
  FORWARD_BATCH_CONTENT_TYPE, FORWARD_CONTENT_TYPE, forwardingBodyLimit, forwardingMetaLimit, MESSAGE_LENGTHS_HEADER, META_LENGTH_HEADER, META_LENGTHS_HEADER,
} from '@edgemail/shared';

/** Read by services/inbound-emails/forwarded-body.ts; its transforms strip U+0000 and fill defaults. */
export const InboundMetaSchema = SharedInboundMeta;

export type InboundMeta = z.infer<typeof InboundMetaSchema>;

export const InboundForwardedSchema = ForwardAnswer
  .extend({
    inbound_emails: ForwardAnswer.shape.inbound_emails.meta({ description: 'One record per project owning a recipient domain' }),
    duplicate: ForwardAnswer.shape.duplicate.meta({ description: 'True when every record already existed (the spool id was forwarded before)' }),
  })
  .openapi('InboundForwarded');

/** `POST /relay/v1/inbound/batch`: one result per message, in body order. */
export const InboundBatchForwardedSchema = ForwardBatchAnswer
  .extend({
    results: ForwardBatchAnswer.shape.results.meta({
      description: 'One per message, in body order: `status` 200 with the single route\'s answer (`inbound_emails`, `duplicate`), or the status, `error` (and `fields`, `retry_after` in seconds for a 429) the single route would have given it',
    }),
  })
  .openapi('InboundBatchForwarded');
