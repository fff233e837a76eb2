// The body of `POST /relay/v1/inbound` (docs/relay-protocol.md): the meta,
// what the relay node learnt of one message at the SMTP door, then the raw
// message and its attachments back to back. Unknown meta keys are ignored, so
// a newer node can add some without its mail being refused.
// The node's side of this contract is relay-node/src/protocol.ts.
import { z } from '@hono/zod-openapi';

// The framing and limits are shared with the node: shared/src/relay-protocol/inbound-forward.ts.
export { FORWARD_CONTENT_TYPE, forwardingBodyLimit, forwardingMetaLimit, META_LENGTH_HEADER } from '@edgemail/shared';

/** PostgreSQL text and jsonb cannot hold U+0000; a hostile message may carry it. */
const text = (max?: number) => {
  const base = max === undefined ? z.string() : z.string().max(max, `must be at most ${max} characters`);
  return base.transform((s) => s.replace(/\u0000/g, ''));
};
const optionalText = (max?: number) => text(max).nullable().optional().transform((s) => s ?? '');

const RECIPIENT = /^[^\s@]+@[^\s@]+$/;

export const InboundMetaSchema = z.object({
  spool_id: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be 1 to 100 characters of A-Z, a-z, 0-9, ".", "_" and "-"'),
  received_at: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }),
  client_ip: text(64),
  helo: optionalText(255),
  mail_from: text(320).openapi({ description: 'The envelope sender, bare; empty for the null sender' }),
  rcpt_to: z.array(z.string().max(320).regex(RECIPIENT, 'must be an address')).min(1, 'must list at least one recipient').max(1000),
  size: z.number().int().min(0).openapi({ description: 'Byte length of the raw message that follows the meta in the body; the record\'s `size`' }),
  auth: z.object({
    spf: text(32),
    dkim: text(32),
    dmarc: text(32),
    aligned: z.boolean(),
    client_ip: text(64),
  }),
  dmarc_policy: text(32).nullable().optional(),
  smtp_rejected: z.boolean().default(false),
  parsed: z.object({
    ok: z.boolean(),
    error: optionalText(1000),
    message_id: optionalText(998),
    subject: optionalText(),
    text: optionalText(),
    html: optionalText(),
    headers: z.record(text(998), text()).default({}).openapi({ description: 'Each header\'s first value (name in lower case)' }),
    // Absent from nodes older than it: their records keep first values only.
    repeated_headers: z.record(text(998), z.array(text()).min(2, 'must list every value of a header that occurs more than once (at least two)'))
      .default({}).openapi({ description: 'Every value, in the message\'s order, of each header that occurs more than once' }),
    attachments: z.array(z.object({
      filename: optionalText(1000),
      content_type: optionalText(255).transform((t) => t || 'application/octet-stream'),
      size: z.number().int().min(0).openapi({ description: 'Byte length of this attachment in the body' }),
    })).max(1000).default([]),
  }),
});

export type InboundMeta = z.infer<typeof InboundMetaSchema>;

export const InboundForwardedSchema = z
  .object({
    inbound_emails: z.array(z.object({
      id: z.uuid(),
      project_id: z.uuid(),
      status: z.enum(['received', 'rejected', 'failed']),
    })).openapi({ description: 'One record per project owning a recipient domain' }),
    duplicate: z.boolean().openapi({ description: 'True when every record already existed (the spool id was forwarded before)' }),
  })
  .openapi('InboundForwarded');
