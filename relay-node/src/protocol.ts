// The bodies of docs/relay-protocol.md (`/relay/v1`), as the node sends and reads them.
import type { DmarcPolicy, InboundAuth } from './auth/verdicts.js';

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
}

export interface HeartbeatAnswer {
  node: NodeRecord;
  domains_version: string;
}

export interface DomainsAnswer {
  /** Every registered domain name, lower case. */
  domains: string[];
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
  attachments: ParsedAttachmentMeta[];
}

/** The `meta` part of `POST /relay/v1/inbound`. */
export interface InboundMeta {
  spool_id: string;
  received_at: string;
  client_ip: string;
  helo: string;
  mail_from: string;
  rcpt_to: string[];
  /** Bytes of the `raw` part. */
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
