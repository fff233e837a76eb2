// SMTP submission (docs/submission.md): a relay node's submission listener
// asks the edge whether an AUTH password (a project API key) may submit, and
// hands each submitted message over. The node parses the MIME (mailparser, as
// the inbound forwarder does) into the send route's own fields; the edge runs
// them through the send route's schema and checks, so nothing the client wrote
// reaches a header unchecked. The edge validates the requests with exactly
// these schemas (edge/src/contracts/relay-submission.ts adds OpenAPI metadata);
// the node parses the answers with them.
import { z } from 'zod';
import type { Config } from '../config/load.js';

/** Recipients per message, as the send route takes them (edge/src/contracts/send.ts MAX_RECIPIENTS; relay-submission.ts fails the typecheck if they part). */
export const SUBMISSION_MAX_RECIPIENTS = 50;

/**
 * The send routes' request body limit (and the submission hand-over's): the
 * attachments base64-encoded (4/3 of `send.max_attachment_bytes`) plus
 * `server.max_body_bytes` for the rest. A submission listener takes no
 * message larger than this (docs/submission.md, "Message size"): its MIME,
 * attachments already in base64, is not smaller than the JSON the edge gets.
 */
export const sendBodyLimitBytes = (config: Pick<Config, 'send.max_attachment_bytes' | 'server.max_body_bytes'>): number =>
  Math.ceil((config['send.max_attachment_bytes'] * 4) / 3) + config['server.max_body_bytes'];

/** A presented token is at most this long; longer is no key of ours. */
const MAX_TOKEN_CHARS = 200;
/** An IP address, as the listener saw it (the PROXY header's when a trusted balancer sent one). */
const clientAddress = z.string().min(2).max(64);

/** `POST /relay/v1/submission/auth`: the AUTH password and where the client connects from. */
export const SubmissionAuthRequest = z.object({
  token: z.string().min(1).max(MAX_TOKEN_CHARS),
  client_address: clientAddress,
});
export type SubmissionAuthRequest = z.input<typeof SubmissionAuthRequest>;

/** Why AUTH is refused; every one is answered `535 5.7.8` and counts toward the address's failures. */
export const SUBMISSION_AUTH_REFUSALS = ['invalid', 'revoked', 'expired', 'ip_not_allowed', 'permission', 'node_scope'] as const;

/** The key's project (and whether it is a sandbox key), or why it may not submit. */
export const SubmissionAuthAnswer = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), project_id: z.string(), sandbox: z.boolean() }),
  z.object({ ok: z.literal(false), reason: z.enum(SUBMISSION_AUTH_REFUSALS), message: z.string() }),
]);
export type SubmissionAuthAnswer = z.output<typeof SubmissionAuthAnswer>;

/** An attachment as the send route takes it: the bytes in base64. */
export const SubmissionAttachment = z.object({
  filename: z.string(),
  content_type: z.string().optional(),
  content: z.string(),
});

/**
 * The message as the send route's fields, read from its MIME: `from`, `to`
 * and `cc` from its headers (only the envelope recipients they name), every
 * other envelope recipient as `bcc`; the custom headers the API would keep.
 * Not validated here: the edge validates it with the send route's schema and
 * answers a refusal as an SMTP reply.
 */
export const SubmissionMessage = z.object({
  from: z.string(),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  bcc: z.array(z.string()),
  reply_to: z.array(z.string()),
  subject: z.string(),
  html: z.string().optional(),
  text: z.string().optional(),
  headers: z.record(z.string(), z.string()),
  attachments: z.array(SubmissionAttachment),
});
export type SubmissionMessage = z.input<typeof SubmissionMessage>;

/** `POST /relay/v1/submission/messages`: one accepted DATA, idempotent by `spool_id`. */
export const SubmissionRequest = z.object({
  /** The node's spool id of the message: the same id sent again is answered as the first time, nothing written twice. */
  spool_id: z.string().min(1).max(100),
  token: z.string().min(1).max(MAX_TOKEN_CHARS),
  client_address: clientAddress,
  mail_from: z.string().max(1000),
  rcpt_to: z.array(z.string().max(1000)).min(1).max(1000),
  /** Bytes of the message as received. */
  size: z.number().int().min(0),
  /**
   * The message's `Message-ID` header as the client wrote it (absent when it has none). With the project
   * and the envelope it recognises a submission sent again after a lost 250: answered as the first time
   * for 24 hours, nothing sent twice. Absent from older nodes.
   */
  message_id: z.string().min(1).max(998).optional(),
  /**
   * The message's `Date` header as the client wrote it (absent when it has none, and from older nodes).
   * The edge keeps it (and `message_id`) on the sent message when it is valid (docs/submission.md).
   */
  date: z.string().min(1).max(998).optional(),
  message: SubmissionMessage,
});
export type SubmissionRequest = z.input<typeof SubmissionRequest>;

/**
 * Accepted (the rows are committed: the node answers 250), or the SMTP reply
 * the refusal is (nothing written): `code` and `text` (which starts with the
 * enhanced status code) are sent as they are.
 */
export const SubmissionAnswer = z.discriminatedUnion('accepted', [
  z.object({
    accepted: z.literal(true),
    message_id: z.string(),
    emails: z.array(z.object({ id: z.string(), recipient: z.string(), status: z.string() })),
  }),
  z.object({ accepted: z.literal(false), code: z.number().int().min(400).max(599), text: z.string() }),
]);
export type SubmissionAnswer = z.output<typeof SubmissionAnswer>;

/**
 * `POST /relay/v1/submission/lease`: the key judged again (as at AUTH) and the
 * project's state the node may answer the next messages from, for `ttl_ms`
 * (docs/submission.md, "Answered at the node"). Nothing is reserved at the edge:
 * the node subtracts what it has accepted and not yet handed over.
 */
export const SubmissionLeaseRequest = SubmissionAuthRequest;
export type SubmissionLeaseRequest = z.input<typeof SubmissionLeaseRequest>;

export const SubmissionLeaseAnswer = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    project_id: z.string(),
    sandbox: z.boolean(),
    /** The project's verified sending domains (lower case): a From on one of them passes at the node. */
    domains: z.array(z.string()),
    /** Recipients the plan still allows now (the tighter of its hourly and daily windows); null: unlimited. */
    remaining: z.number().int().nullable(),
    /** How long the node may answer from this lease (`submission.lease_ttl`). */
    ttl_ms: z.number().int().min(0),
  }),
  z.object({ ok: z.literal(false), reason: z.enum(SUBMISSION_AUTH_REFUSALS), message: z.string() }),
]);
export type SubmissionLeaseAnswer = z.output<typeof SubmissionLeaseAnswer>;

/** Messages per `POST /relay/v1/submission/batch`. */
export const SUBMISSION_BATCH_MAX_MESSAGES = 50;

/** One message a node answered 250 for: the envelope, the project its lease named, and the send's fields. */
export const SubmissionBatchItem = SubmissionRequest.omit({ token: true }).extend({
  /** The id the node's 250 named (`Message accepted as <id>`): the email log's `message_id`. */
  id: z.uuid(),
  project_id: z.uuid(),
  sandbox: z.boolean(),
});
export type SubmissionBatchItem = z.input<typeof SubmissionBatchItem>;

export const SubmissionBatchRequest = z.object({
  messages: z.array(SubmissionBatchItem).min(1).max(SUBMISSION_BATCH_MAX_MESSAGES),
});
export type SubmissionBatchRequest = z.input<typeof SubmissionBatchRequest>;

/**
 * One result per message, in order: `sent` (its rows written now), `replayed`
 * (written by an earlier hand-over of the same id: nothing written), or
 * `failed` (its rows written as failed with `reason` and an `email.failed`
 * event each). Every one of them is done with: the node forgets the message.
 */
export const SubmissionBatchAnswer = z.object({
  results: z.array(z.object({
    spool_id: z.string(),
    id: z.string(),
    outcome: z.enum(['sent', 'replayed', 'failed']),
    reason: z.string().optional(),
  })),
});
export type SubmissionBatchAnswer = z.output<typeof SubmissionBatchAnswer>;
