// `POST /relay/v1/inbound` (docs/relay-protocol.md): the framing and the
// limits both sides size a forward by (the meta itself: inbound-meta.ts). One
// statement of them for the edge and the relay node.
// No node:* imports: the edge's Worker imports this too.

/** The body: `<meta JSON><raw message><attachment 0>…`, nothing else. */
export const FORWARD_CONTENT_TYPE = 'application/vnd.edgemail.inbound';
/** Byte length of the meta JSON at the start of the body. */
export const META_LENGTH_HEADER = 'edgemail-meta-length';

const MiB = 1_048_576;

/** The whole body: the message, its attachments (at most as large again) and the meta. */
export const forwardingBodyLimit = (maxMessageSize: number) => 2 * maxMessageSize + MiB;

/**
 * The most of a message's parsed text, and again of its html, a forward
 * carries (UTF-8 bytes each). These two are what make a meta large; the node
 * cuts them to this before it sizes the forward.
 */
export const FORWARD_BODY_TEXT_MAX_BYTES = MiB;

/**
 * The meta, the one piece the edge holds in memory (decoded, parsed, checked,
 * then serialised again for the database: a few copies of it at once in a
 * 128 MB isolate). Room for text and html at their cap, JSON-escaped (2 MiB
 * each), plus 2 MiB for headers (a 256 KiB header block, first and repeated
 * values) and up to 1,000 attachments' names and types: 6 MiB, or
 * `maxMessageSize + 1 MiB` when that is less. A node whose meta would be
 * larger forwards the raw message alone, stored `failed`.
 */
export const FORWARD_META_MAX_BYTES = 2 * (2 * FORWARD_BODY_TEXT_MAX_BYTES) + 2 * MiB;
export const forwardingMetaLimit = (maxMessageSize: number) => Math.min(maxMessageSize + MiB, FORWARD_META_MAX_BYTES);

/**
 * Attachments stored per message. Each is an R2 object per project, and every
 * R2 call of a forward counts against the Worker's subrequest limit and the
 * node's forward timeout. A message with more is stored `failed`, its raw
 * message kept (every attachment is in it), none of its attachments stored.
 */
export const FORWARD_MAX_STORED_ATTACHMENTS = 100;

/**
 * R2 calls one forward may make: the raw message and each attachment put for
 * the first project, then read and put again for each further one
 * (`(1 + attachments) × (2 × projects − 1)`). Under the paid plan's 1,000
 * subrequests, with room for the database's.
 */
export const FORWARD_MAX_STORAGE_CALLS = 500;

/** R2 calls a forward of `objects` objects (raw message and attachments) for `projects` projects makes. */
export const forwardStorageCalls = (objects: number, projects: number) => objects * (2 * projects - 1);

/**
 * Distinct recipient domains a relay node accepts in one message. Each domain
 * belongs to at most one project, so a message it accepted never reaches more
 * projects than one forward may store (`FORWARD_MAX_STORAGE_CALLS`); more
 * recipients get `452 4.5.3` at RCPT and the sender sends them in another message.
 */
export const MAX_RECIPIENT_DOMAINS = 100;

/**
 * `POST /relay/v1/inbound/batch`: several messages in one body, so that the
 * edge's per-request work (credential, limiter, recipients' query, one
 * statement) is paid once for all of them. The body is every message's meta
 * JSON first, in order, then each message's raw bytes and attachments in the
 * same order; the two headers give each piece's length.
 */
export const FORWARD_BATCH_CONTENT_TYPE = 'application/vnd.edgemail.inbound-batch';
/** Each message's meta JSON byte length, comma-separated, in body order. */
export const META_LENGTHS_HEADER = 'edgemail-meta-lengths';
/** Each message's raw message plus attachments, in bytes, comma-separated, in body order. */
export const MESSAGE_LENGTHS_HEADER = 'edgemail-message-lengths';
/**
 * Messages in one batch. The body limit (`forwardingBodyLimit`), the metas
 * together (`forwardingMetaLimit`: they are held at once) and the storage
 * calls together (`FORWARD_MAX_STORAGE_CALLS`) bound it as they bound one
 * message; a message past the storage calls is answered 413 on its own.
 */
export const FORWARD_BATCH_MAX_MESSAGES = 50;
