// The bodies of docs/relay-protocol.md (`/relay/v1`), as the node sends and reads them.
import type { DmarcPolicy, InboundAuth } from './inbound/mail-auth/verdicts.js';

/** The node record the edge answers enrolment and heartbeats with. */
export interface NodeRecord {
  id: string;
  project_id: string;
  name: string;
  key_prefix: string;
  revoked: boolean;
  version: string | null;
  listeners: unknown[];
  tls: Record<string, unknown>;
  spool_depth: number;
  dead_letters: number;
  dead_letter_bytes: number;
  last_heartbeat_at: string | null;
  last_address: string | null;
  created_at: string;
}

export interface EnrollAnswer {
  node: NodeRecord;
  /** `myr_…`, shown once. */
  token: string;
}

export interface ListenerReport {
  name: 'inbound';
  port: number;
  tls: 'starttls' | 'implicit' | 'off';
  proxy_protocol: boolean;
}

export interface TlsReport {
  /**
   * Where the certificate came from: the edge's `source` (`self_signed` today),
   * `stand_in` while the node presents a pair of its own because the edge has
   * not answered yet, `none` when STARTTLS is off.
   */
  source: string;
  not_after: string | null;
}

export interface HeartbeatBody {
  version: string;
  listeners: ListenerReport[];
  tls: TlsReport;
  spool_depth: number;
  /** Messages in `<spool>/dead/` (refused by the edge for good) and their bytes. */
  dead_letters: number;
  dead_letter_bytes: number;
}

export interface HeartbeatAnswer {
  node: NodeRecord;
  domains_version: string;
}

export interface DomainsAnswer {
  /** Every domain the node accepts mail for (ownership proven), lower case. */
  domains: string[];
  /** Among them, those whose project's inbound storage quota is reached (absent from an older edge). */
  full?: string[];
  version: string;
}

/** A listener certificate as the edge hands it out. */
export interface CertificateAnswer {
  /** PEM chain. */
  certificate: string;
  /** PEM (PKCS#8). */
  private_key: string;
  source: string;
  not_after: string;
}

export interface ParsedAttachmentMeta {
  filename: string;
  content_type: string;
  size: number;
}

/** What the node parsed out of the message (mailparser); `ok: false` sends the raw bytes only. */
export interface ParsedMeta {
  ok: boolean;
  error: string | null;
  message_id: string;
  subject: string;
  text: string;
  html: string;
  /** Header name (lower case) → its first value, unfolded and decoded. */
  headers: Record<string, string>;
  /**
   * Header name → all its values in the message's order, for each name that
   * occurs more than once. A separate key so that an edge older than it (which
   * ignores unknown keys) still takes the message, with first values only.
   */
  repeated_headers?: Record<string, string[]>;
  attachments: ParsedAttachmentMeta[];
}

// `POST /relay/v1/inbound`: the body is the meta JSON, then the raw message,
// then each attachment, back to back (edge side: edge/src/contracts/inbound-meta.ts).

// The framing and the edge's limits, one statement for both sides: shared/src/relay-protocol/inbound-forward.ts.
export { FORWARD_BODY_TEXT_MAX_BYTES, FORWARD_CONTENT_TYPE, forwardingBodyLimit, forwardingMetaLimit, META_LENGTH_HEADER } from '@edgemail/shared';

/**
 * A recipient the edge takes in `rcpt_to` (edge/src/contracts/inbound-meta.ts):
 * `local@domain`, no whitespace, at most 320 characters.
 */
export const edgeTakesRecipient = (address: string) => address.length <= 320 && /^[^\s@]+@[^\s@]+$/.test(address);

/** The meta at the start of `POST /relay/v1/inbound`. */
export interface InboundMeta {
  spool_id: string;
  received_at: string;
  client_ip: string;
  helo: string;
  mail_from: string;
  rcpt_to: string[];
  /** Bytes of the raw message that follows the meta. */
  size: number;
  auth: InboundAuth;
  dmarc_policy: DmarcPolicy | null;
  /** The node answered 550 5.7.1 (DMARC failure on a p=reject domain). */
  smtp_rejected: boolean;
  parsed: ParsedMeta;
}

export interface ForwardAnswer {
  inbound_emails: { id: string; project_id: string; status: string }[];
  /** Every record already existed: a repeat of a message the edge has. */
  duplicate: boolean;
}

// Outbound delivery (docs/sending.md, "Relay protocol: outbound").

/** An attachment of an outbound message, its bytes in base64. */
export interface OutboundAttachment {
  filename: string;
  content_type: string;
  content_base64: string;
}

/** What the message says (headers and body); the envelope says where it goes. Never a Bcc header. */
export interface OutboundMessage {
  /** `<uuid@acme.test>`. */
  message_id: string;
  /** RFC 3339 (the send's created_at). */
  date: string;
  /** `Acme <news@acme.test>`. */
  from: string;
  to: string[];
  cc: string[];
  reply_to: string[];
  subject: string;
  text: string | null;
  html: string | null;
  /** Custom headers, name → value. */
  headers: Record<string, string>;
  attachments: OutboundAttachment[];
}

/** The from-domain's DKIM key. */
export interface OutboundDkim {
  domain: string;
  selector: string;
  algorithm: 'rsa' | 'ed25519';
  /** PKCS#8 PEM. */
  private_key_pem: string;
}

/** Deliver to the recipient domain's MX hosts (or `outbound.smarthost`). */
export interface OutboundMxRoute {
  kind: 'mx';
  /** The recipient's domain. */
  domain: string;
}

/** Deliver through a configured SMTP server: the project's, or the shared pool's. */
export interface OutboundSmtpRoute {
  kind: 'smtp';
  source: 'project' | 'pool';
  host: string;
  port: number;
  security: 'starttls' | 'tls' | 'none';
  username: string | null;
  password: string | null;
}

export type OutboundRoute = OutboundMxRoute | OutboundSmtpRoute;

/** One claimed recipient: `POST /relay/v1/outbound/claim` answers a list of these. */
export interface OutboundJob {
  /** The recipient row. */
  email_id: string;
  /** Number of this attempt (counted up at the claim). */
  attempt: number;
  /** RFC 3339: the claim is this node's until then. */
  lease_until: string;
  envelope: { from: string; to: string };
  message: OutboundMessage;
  dkim: OutboundDkim | null;
  route: OutboundRoute;
}

export interface OutboundClaimAnswer {
  /** Empty when nothing is due. */
  jobs: OutboundJob[];
}

/** 2xx → sent; 4xx or no answer → deferred; 5xx → failed. */
export type OutboundOutcome = 'sent' | 'deferred' | 'failed';

/** One attempt's result, reported with `POST /relay/v1/outbound/results`. */
export interface OutboundResult {
  email_id: string;
  attempt: number;
  outcome: OutboundOutcome;
  /** Null when no SMTP answer came. */
  smtp_code: number | null;
  /** The server's reply text, or why no answer came. */
  reply: string;
  /** `mx.example.org:25`, `capture:<path>`, or null when no server was tried. */
  server: string | null;
  /** RFC 3339. */
  started_at: string;
  duration_ms: number;
}

export interface OutboundResultsAnswer {
  accepted: string[];
  /** Results for leases the node no longer holds: recorded nowhere. */
  stale: string[];
}
