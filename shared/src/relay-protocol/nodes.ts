// Enrolment and heartbeat (docs/relay-protocol.md): what a node says of
// itself, and the node record the edge answers with. The edge validates the
// requests with exactly these schemas (edge/src/contracts/relay.ts adds their
// OpenAPI names and examples); the node parses the answers with them.
// Each schema's type of the same name is what the node handles: a request's
// input (what it may send), an answer's output (what it reads).
import { z } from 'zod';

/** PostgreSQL's `integer`. */
const INT4_MAX = 2 ** 31 - 1;

/** A node's version, as its User-Agent names it too. */
export const NodeVersion = z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters');

/**
 * What one listener presents to a client without SNI (docs/relay-protocol.md):
 * `source` `assigned`, `acme` or `self_signed` from the edge's bundle,
 * `stand_in` for a pair of the node's own; `certificate` its name in the
 * bundle (null for a stand-in). `acme_hosts`: the SNI names it answers with
 * an ACME certificate instead.
 */
export const PresentedCertificate = z.object({
  source: z.string().max(32),
  certificate: z.string().max(300).nullable(),
  not_after: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).nullable(),
  acme_hosts: z.array(z.string().max(253)).max(100).optional(),
});
export type PresentedCertificate = z.input<typeof PresentedCertificate>;

/**
 * One SMTP listener of the node. A node names its one listener `inbound`
 * today; the edge takes any name, for the listeners a newer node may add.
 */
export const ListenerReport = z.object({
  name: z.string().min(1).max(64),
  port: z.number().int().min(0).max(65535),
  tls: z.enum(['starttls', 'implicit', 'off']),
  proxy_protocol: z.boolean(),
  /** What the listener presents (absent when TLS is off, and from nodes older than per-listener resolution). */
  certificate: PresentedCertificate.optional(),
});
export type ListenerReport = z.input<typeof ListenerReport>;

/**
 * The certificate a node presents (its inbound listener's, or else its
 * submission listener's; per listener: ListenerReport's `certificate`).
 * `source` is the edge's (certificate.ts: `assigned`, `acme`,
 * `self_signed`), `stand_in` while the node presents a pair of its own
 * because the edge has not answered yet, `none` when STARTTLS is off; the edge
 * records any short string, for sources a newer node may add.
 */
export const TlsReport = z.object({
  source: z.string().max(32),
  not_after: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).nullable().optional(),
  /** The certificate bundle's generation the node holds (`GET /relay/v1/certificates`); absent from older nodes. */
  generation: z.number().int().min(0).nullable().optional(),
});
export type TlsReport = z.input<typeof TlsReport>;

/** `POST /relay/v1/enroll`. */
export const EnrollRequest = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
    version: NodeVersion.optional(),
  })
  .strict();
export type EnrollRequest = z.input<typeof EnrollRequest>;

/** Most listeners one heartbeat reports. */
export const MAX_LISTENERS = 16;

/** `POST /relay/v1/heartbeat`, every 30 s. */
export const HeartbeatBody = z
  .object({
    version: NodeVersion,
    listeners: z.array(ListenerReport).max(MAX_LISTENERS),
    tls: TlsReport,
    // Bounded by their columns (integer, bigint read as a number): past them the write would fail with a 500.
    spool_depth: z.number().int().min(0).max(INT4_MAX, `must be at most ${INT4_MAX}`),
    // Messages in `<spool>/dead/` (refused by the edge for good) and their bytes. Optional so that a node
    // older than these fields still beats (recorded as 0).
    dead_letters: z.number().int().min(0).max(INT4_MAX, `must be at most ${INT4_MAX}`).default(0),
    dead_letter_bytes: z.number().max(Number.MAX_SAFE_INTEGER, `must be at most ${Number.MAX_SAFE_INTEGER}`).int().min(0).default(0),
  })
  .strict();
export type HeartbeatBody = z.input<typeof HeartbeatBody>;

/**
 * The node record (also `GET /api/v1/relay/nodes`): never the credential's
 * hash. `listeners` and `tls` are as the last heartbeat reported them.
 */
export const NodeRecord = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  name: z.string(),
  key_prefix: z.string(),
  revoked: z.boolean(),
  version: z.string().nullable(),
  listeners: z.array(z.unknown()),
  tls: z.record(z.string(), z.unknown()),
  spool_depth: z.number().int(),
  dead_letters: z.number().int(),
  dead_letter_bytes: z.number().int(),
  /** RFC 3339. */
  last_heartbeat_at: z.string().nullable(),
  last_address: z.string().nullable(),
  /** RFC 3339. */
  created_at: z.string(),
});
export type NodeRecord = z.output<typeof NodeRecord>;

export const EnrollAnswer = z.object({
  node: NodeRecord,
  /** `myr_…`, shown once. */
  token: z.string(),
});
export type EnrollAnswer = z.output<typeof EnrollAnswer>;

export const HeartbeatAnswer = z.object({
  node: NodeRecord,
  /** Changes whenever `GET /relay/v1/domains` would answer differently: the node fetches it again. */
  domains_version: z.string(),
});
export type HeartbeatAnswer = z.output<typeof HeartbeatAnswer>;
