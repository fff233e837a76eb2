// Outbound delivery (docs/sending.md, "Relay protocol: outbound"): the claim
// and its jobs, the results and their answer. The edge validates the requests
// with exactly these schemas (edge/src/contracts/relay-outbound.ts adds their
// OpenAPI names, descriptions and examples); the node parses the answers with
// them. Unknown keys are ignored both ways, so either side can add some.
// Each schema's type of the same name is what the node handles: a request's
// input (what it may send), an answer's output (what it reads).
import { z } from 'zod';
import { isUuid } from '../uuid.js';

/** Most jobs one claim asks for, and most results one report carries. */
export const MAX_CLAIM = 100;
export const MAX_RESULTS = 100;

/** Longest reply and server name stored; longer ones are cut (a refusal would lose the result). */
export const MAX_REPLY_CHARS = 4000;
const MAX_SERVER_CHARS = 300;

/** PostgreSQL text cannot hold U+0000; cut to `max` rather than refuse. */
// A remote server's words, as the node received them: PostgreSQL text holds no NUL and no unpaired surrogate.
const storedText = (max: number) => z.string().transform((s) => s.replace(/\u0000/g, '').replace(/\p{Cs}/gu, '\uFFFD').slice(0, max));

/** `POST /relay/v1/outbound/claim`: how many recipients the node can take now (its free delivery slots). */
export const OutboundClaim = z.object({
  max: z.number().int('must be an integer').min(1, 'must be from 1 to 100').max(MAX_CLAIM, 'must be from 1 to 100'),
});
export type OutboundClaim = z.input<typeof OutboundClaim>;

/** An attachment of an outbound message, its bytes in base64 (no line breaks). */
export const OutboundAttachment = z.object({
  filename: z.string(),
  content_type: z.string(),
  content_base64: z.string(),
});
export type OutboundAttachment = z.output<typeof OutboundAttachment>;

/** What the message says (headers and body); the envelope says where it goes. Never a Bcc header. */
export const OutboundMessage = z.object({
  /** `<uuid@acme.test>`. */
  message_id: z.string(),
  /** RFC 3339: the send's created_at, the Date header. */
  date: z.string(),
  /** `Acme <news@acme.test>`. */
  from: z.string(),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  reply_to: z.array(z.string()),
  subject: z.string(),
  text: z.string().nullable(),
  html: z.string().nullable(),
  /** Custom headers, name → value. */
  headers: z.record(z.string(), z.string()),
  attachments: z.array(OutboundAttachment),
});
export type OutboundMessage = z.output<typeof OutboundMessage>;

/** The from-domain's DKIM key, unsealed for this job. */
export const OutboundDkim = z.object({
  domain: z.string(),
  selector: z.string(),
  algorithm: z.enum(['rsa', 'ed25519']),
  /** PKCS#8 PEM. */
  private_key_pem: z.string(),
});
export type OutboundDkim = z.output<typeof OutboundDkim>;

/** Deliver to the recipient domain's MX hosts (or `outbound.smarthost`). */
export const OutboundMxRoute = z.object({
  kind: z.literal('mx'),
  /** The recipient's domain. */
  domain: z.string(),
});
export type OutboundMxRoute = z.output<typeof OutboundMxRoute>;

/** Deliver through a configured SMTP server: the project's, or the shared pool's. */
export const OutboundSmtpRoute = z.object({
  kind: z.literal('smtp'),
  source: z.enum(['project', 'pool']),
  host: z.string(),
  port: z.number().int(),
  security: z.enum(['starttls', 'tls', 'none']),
  username: z.string().nullable(),
  password: z.string().nullable(),
});
export type OutboundSmtpRoute = z.output<typeof OutboundSmtpRoute>;

/** The project's SMTP server if it has one, else one of the shared pool's (at random), else the recipient's MX. */
export const OutboundRoute = z.union([OutboundMxRoute, OutboundSmtpRoute]);
export type OutboundRoute = z.output<typeof OutboundRoute>;

/** One claimed recipient. */
export const OutboundJob = z.object({
  /** The recipient row. */
  email_id: z.uuid(),
  /** Number of this attempt (counted up at the claim); the result must carry it. */
  attempt: z.number().int(),
  /** RFC 3339: the recipient is this node's until then; after it, another claim may take it. */
  lease_until: z.string(),
  envelope: z.object({
    /** The bounce address: the bare from address. */
    from: z.string(),
    /** This one recipient. */
    to: z.string(),
    /**
     * The VERP return path to give as MAIL FROM instead of `from`
     * (docs/bounces.md): set on `mx` routes when the installation has a
     * bounce domain, absent otherwise. An older node ignores it.
     */
    return_path: z.string().nullable().optional(),
  }),
  message: OutboundMessage,
  /** Always set today: a recipient whose message cannot be signed is failed at the claim, never handed out. */
  dkim: OutboundDkim.nullable(),
  route: OutboundRoute,
});
export type OutboundJob = z.output<typeof OutboundJob>;

export const OutboundClaimAnswer = z.object({
  /** Empty when nothing is due. */
  jobs: z.array(OutboundJob),
});
export type OutboundClaimAnswer = z.output<typeof OutboundClaimAnswer>;

/**
 * A job of a claim the node cannot read (an enum value or route kind of a
 * newer edge, a malformed job): it is not delivered, and is reported back as
 * deferred naming `field` and `problem` when its `email_id` and `attempt` can
 * be read; the claim's other jobs go on (docs/relay-protocol.md, "Versions").
 */
export interface UnreadableJob {
  email_id: string | null;
  attempt: number | null;
  /** The first field that does not fit, dotted (`route.kind`). */
  field: string;
  problem: string;
}

/** The claim answer as a node reads it: each job on its own, so one it cannot read never costs the others. */
export const OutboundClaimReading = z.object({ jobs: z.array(z.unknown()) }).transform(({ jobs }) => readClaimJobs(jobs));
export type OutboundClaimReading = z.output<typeof OutboundClaimReading>;

/** A union says only "Invalid input": name the unknown kind, or the known kind's first field that does not fit. */
function routeProblem(route: unknown): { field: string; problem: string } | null {
  const kind = route && typeof route === 'object' ? (route as { kind?: unknown }).kind : undefined;
  const schema = kind === 'mx' ? OutboundMxRoute : kind === 'smtp' ? OutboundSmtpRoute : null;
  if (!schema) return { field: 'route.kind', problem: `unknown route kind ${JSON.stringify(kind ?? null)?.slice(0, 60)} (this node knows "mx" and "smtp")` };
  const issue = schema.safeParse(route).error?.issues[0];
  return issue ? { field: ['route', ...issue.path].join('.'), problem: issue.message } : null;
}

/** Splits a claim's jobs into those that fit OutboundJob and those that do not. */
export function readClaimJobs(raw: unknown[]): { jobs: OutboundJob[]; unreadable: UnreadableJob[] } {
  const jobs: OutboundJob[] = [];
  const unreadable: UnreadableJob[] = [];
  for (const item of raw) {
    const read = OutboundJob.safeParse(item);
    if (read.success) {
      jobs.push(read.data);
      continue;
    }
    const issue = read.error.issues[0];
    const fields = (item && typeof item === 'object' ? item : {}) as { email_id?: unknown; attempt?: unknown; route?: unknown };
    const why = issue?.path[0] === 'route' && issue.path.length === 1 ? routeProblem(fields.route) : null;
    unreadable.push({
      email_id: typeof fields.email_id === 'string' && isUuid(fields.email_id) ? fields.email_id : null,
      attempt: Number.isInteger(fields.attempt) && (fields.attempt as number) >= 1 ? (fields.attempt as number) : null,
      field: why?.field ?? (issue?.path.length ? issue.path.join('.') : 'the job'),
      problem: why?.problem ?? issue?.message ?? 'does not fit',
    });
  }
  return { jobs, unreadable };
}

/** 2xx → sent; 4xx or no answer → deferred; 5xx → failed. */
export const OutboundOutcome = z.enum(['sent', 'deferred', 'failed']);
export type OutboundOutcome = z.output<typeof OutboundOutcome>;

/** One attempt's result. */
export const OutboundResult = z.object({
  email_id: z.string().refine(isUuid, { message: 'must be a UUID' }),
  attempt: z.number().int('must be an integer').min(1, 'must be at least 1'),
  outcome: OutboundOutcome,
  /** Null when no SMTP answer came. */
  smtp_code: z.number().int('must be an integer').min(100, 'must be an SMTP reply code').max(599, 'must be an SMTP reply code').nullable(),
  /** The server's reply text, or why no answer came (cut to MAX_REPLY_CHARS). */
  reply: storedText(MAX_REPLY_CHARS),
  /** `mx.example.org:25`, `capture:<path>`, or null when no server was tried. */
  server: storedText(MAX_SERVER_CHARS).nullable(),
  started_at: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }),
  duration_ms: z.number().int('must be an integer').min(0, 'must not be negative').max(2_147_483_647, 'is too large'),
});
export type OutboundResult = z.input<typeof OutboundResult>;

/** `POST /relay/v1/outbound/results`. */
export const OutboundResults = z.object({
  results: z.array(OutboundResult).min(1, 'must have at least one result').max(MAX_RESULTS, 'must have at most 100 results'),
});
export type OutboundResults = z.input<typeof OutboundResults>;

export const OutboundResultsAnswer = z.object({
  /** Recorded: the recipient moved on (sent, failed, or queued again). */
  accepted: z.array(z.uuid()),
  /** The node no longer holds that lease (expired and claimed again, or already reported): nothing changed. */
  stale: z.array(z.uuid()),
});
export type OutboundResultsAnswer = z.output<typeof OutboundResultsAnswer>;

/** Most leases one renewal names: every job a node holds (slots and as many claimed ahead) at 100 slots. */
export const MAX_RENEW = 200;

/** One lease a node still holds: the recipient and the attempt it was claimed at. */
export const OutboundLeaseRef = z.object({
  email_id: z.string().refine(isUuid, { message: 'must be a UUID' }),
  attempt: z.number().int('must be an integer').min(1, 'must be at least 1'),
});
export type OutboundLeaseRef = z.input<typeof OutboundLeaseRef>;

/**
 * `POST /relay/v1/outbound/renew`: the jobs the node still holds (waiting for
 * a slot, being delivered, or with a result not yet reported), so that a slow
 * delivery or a long wait never outlives its lease while the node is alive.
 */
export const OutboundRenew = z.object({
  leases: z.array(OutboundLeaseRef).min(1, 'must have at least one lease').max(MAX_RENEW, `must have at most ${MAX_RENEW} leases`),
});
export type OutboundRenew = z.input<typeof OutboundRenew>;

export const OutboundRenewAnswer = z.object({
  /** Extended: each lease's new end (RFC 3339), and its length from the edge's now, ms (the node counts it from its own clock). */
  renewed: z.array(z.object({ email_id: z.uuid(), lease_until: z.string(), lease_ms: z.number().int().min(0) })),
  /** No longer this node's at that attempt (claimed again by another, or already reported): a job not yet started is not started. */
  lost: z.array(z.uuid()),
});
export type OutboundRenewAnswer = z.output<typeof OutboundRenewAnswer>;
