// The meta at the start of `POST /relay/v1/inbound` (docs/relay-protocol.md):
// what the relay node learnt of one message at the SMTP door. The raw message
// and its attachments follow it back to back (inbound-forward.ts: framing and
// limits). Unknown meta keys are ignored, so a newer node can add some without
// its mail being refused. The edge reads the meta with exactly this schema
// (its transforms are how it stores it). The types of the same names are what
// a node sends: the schema's input, narrowed to the keys and words this node
// always sets (the schema also takes what older nodes left out).
import { z } from 'zod';
import type { AuthVerdict, DmarcPolicy } from './mail-auth.js';

/**
 * PostgreSQL text and jsonb cannot hold U+0000 or an unpaired surrogate; a
 * hostile message may carry either (an encoded word in UTF-16 decodes to a
 * lone half). NUL is dropped, a lone half becomes U+FFFD, as a remote server's
 * reply is stored (outbound.ts): the message's words as it gave them, not a
 * refusal that would keep only its raw bytes.
 */
const text = (max?: number) => {
  const base = max === undefined ? z.string() : z.string().max(max, `must be at most ${max} characters`);
  return base.transform((s) => s.replace(/\u0000/g, '').replace(/\p{Cs}/gu, '\uFFFD'));
};
const optionalText = (max?: number) => text(max).nullable().optional().transform((s) => s ?? '');

/** Symbols of one verdict the edge keeps (rspamd matches a few dozen at most). */
export const INBOUND_SPAM_MAX_SYMBOLS = 200;

const RECIPIENT = /^[^\s@]+@[^\s@]+$/;
const MAX_ADDRESS_CHARS = 320;

/** A recipient the edge takes in `rcpt_to`: `local@domain`, no whitespace, at most 320 characters. */
export const edgeTakesRecipient = (address: string) => address.length <= MAX_ADDRESS_CHARS && RECIPIENT.test(address);

/**
 * The verdicts (mail-auth.ts names the words a node gives). Any short string
 * is taken, so that a node whose verifier learns a new word still has its mail stored.
 */
export const InboundAuth = z.object({
  spf: text(32),
  dkim: text(32),
  dmarc: text(32),
  /** DMARC identifier alignment holds: an SPF or DKIM pass for the From domain's organisation. */
  aligned: z.boolean(),
  client_ip: text(64),
});
export type InboundAuth = z.input<typeof InboundAuth> & { spf: AuthVerdict; dkim: AuthVerdict; dmarc: AuthVerdict };

/**
 * rspamd's verdict on the message (docs/inbound.md, Spam scoring), when the
 * node asked one: its score, the score rspamd itself rejects at, its action
 * (`no action`, `add header`, `rewrite subject`, `greylist`, `soft reject`,
 * `reject`) and the names of the symbols that matched. Null: not scored.
 */
export const InboundSpam = z.object({
  score: z.number().finite(),
  required_score: z.number().finite().nullable().optional().transform((n) => n ?? null),
  action: text(32),
  symbols: z.array(text(128)).max(INBOUND_SPAM_MAX_SYMBOLS),
});
export type InboundSpam = z.output<typeof InboundSpam>;

/** One attachment's label; its bytes follow in the body. */
export const ParsedAttachmentMeta = z.object({
  filename: optionalText(1000),
  content_type: optionalText(255).transform((t) => t || 'application/octet-stream'),
  /** Byte length of this attachment in the body. */
  size: z.number().int().min(0),
});
export type ParsedAttachmentMeta = z.input<typeof ParsedAttachmentMeta> & { filename: string; content_type: string };

/** What the node parsed out of the message (mailparser); `ok: false` sends the raw bytes only. */
export const ParsedMeta = z.object({
  ok: z.boolean(),
  error: optionalText(1000),
  message_id: optionalText(998),
  subject: optionalText(),
  text: optionalText(),
  html: optionalText(),
  /** Header name (lower case) → its first value, unfolded and decoded. */
  headers: z.record(text(998), text()).default({}),
  /**
   * Every value, in the message's order, of each header that occurs more than
   * once. A key of its own: nodes older than it send first values only.
   */
  repeated_headers: z.record(text(998), z.array(text()).min(2, 'must list every value of a header that occurs more than once (at least two)'))
    .default({}),
  attachments: z.array(ParsedAttachmentMeta).max(1000).default([]),
});
/** `repeated_headers` may be left out: a message that could not be parsed has none. */
export type ParsedMeta = z.input<typeof ParsedMeta> & {
  error: string | null;
  message_id: string;
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
  attachments: ParsedAttachmentMeta[];
};

export const InboundMeta = z.object({
  spool_id: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be 1 to 100 characters of A-Z, a-z, 0-9, ".", "_" and "-"'),
  received_at: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }),
  client_ip: text(64),
  helo: optionalText(255),
  /** The envelope sender, bare; empty for the null sender. */
  mail_from: text(MAX_ADDRESS_CHARS),
  rcpt_to: z.array(z.string().max(MAX_ADDRESS_CHARS).regex(RECIPIENT, 'must be an address')).min(1, 'must list at least one recipient').max(1000),
  /** Byte length of the raw message that follows the meta in the body; the record's `size`. */
  size: z.number().int().min(0),
  auth: InboundAuth,
  dmarc_policy: text(32).nullable().optional(),
  /** The node answered 550 5.7.1 (DMARC failure on a p=reject domain). */
  smtp_rejected: z.boolean().default(false),
  /** rspamd's verdict; null (or absent, from an older node) when the message was not scored. */
  spam: InboundSpam.nullable().default(null),
  /** The node answered 550 5.7.1 because the score reached the reject threshold of every recipient's project. */
  spam_rejected: z.boolean().default(false),
  parsed: ParsedMeta,
});
export type InboundMeta = z.input<typeof InboundMeta> & {
  helo: string;
  auth: InboundAuth;
  dmarc_policy: DmarcPolicy | null;
  smtp_rejected: boolean;
  spam?: InboundSpam | null;
  spam_rejected?: boolean;
  parsed: ParsedMeta;
};

/** The answer to a forward: one record per project owning a recipient domain. */
export const ForwardAnswer = z.object({
  inbound_emails: z.array(z.object({
    id: z.uuid(),
    project_id: z.uuid(),
    status: z.enum(['received', 'rejected', 'failed']),
  })),
  /** True when every record already existed (the spool id was forwarded before). */
  duplicate: z.boolean(),
});
export type ForwardAnswer = z.output<typeof ForwardAnswer>;

/**
 * One message's result in `POST /relay/v1/inbound/batch`, in body order: what
 * the single route would have answered it. 200 carries that answer; any
 * other status that answer's error (and `fields`, `retry_after` in seconds
 * for a 429). A message refused here was not stored; the others were.
 */
export const ForwardBatchResult = z.union([
  ForwardAnswer.extend({
    status: z.literal(200),
    spool_id: z.string(),
  }),
  z.object({
    status: z.number().int().min(400).max(599),
    /** Null when the message's meta could not be read. */
    spool_id: z.string().nullable(),
    error: z.string(),
    fields: z.record(z.string(), z.string()).optional(),
    retry_after: z.number().int().min(0).optional(),
  }),
]);
export type ForwardBatchResult = z.output<typeof ForwardBatchResult>;

/** The answer to a batch: one result per message, in body order. */
export const ForwardBatchAnswer = z.object({
  results: z.array(ForwardBatchResult),
});
export type ForwardBatchAnswer = z.output<typeof ForwardBatchAnswer>;
