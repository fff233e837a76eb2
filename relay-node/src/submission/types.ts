// What the submission listener needs from the rest of the node. The listener
// decides SMTP replies only; the edge, the spool and the clock come in here.
import type { SubmissionAnswer, SubmissionAuthAnswer, SubmissionAuthRequest, SubmissionRequest } from '@edgemail/shared';
import type { Log } from '../log.js';
import type { Spool } from '../spool/index.js';
import type { AuthFailures } from './auth-failures.js';
import type { Handover } from './handover.js';
import type { LeaseBook } from './leases.js';
import type { RecentSubmissions } from './recent.js';

/** What a spooled submission's metadata holds (the envelope, for the operator reading the spool). */
export interface SubmissionSpoolMeta {
  session: string;
  client_address: string;
  mail_from: string;
  rcpt_to: string[];
  project_id: string;
  received_at: string;
  /**
   * Answered 250 from the key's lease (docs/submission.md, "Answered at the node"): handed over in a
   * batch, after a restart too. Absent: the message waits for the edge's own verdict (never answered
   * 250 before it), and one a crash left behind is dropped (its client sends it again).
   */
  accepted?: { id: string; sandbox: boolean };
}

/** The identity AUTH established, kept on the session (`session.user`). */
export interface SubmissionUser {
  projectId: string;
  sandbox: boolean;
  /** The password: handed over with each message, which the edge judges again. */
  token: string;
}

export interface SubmissionDeps {
  /** `POST /relay/v1/submission/auth`; throws an edge error when the edge cannot answer. */
  checkKey(request: SubmissionAuthRequest, signal?: AbortSignal): Promise<SubmissionAuthAnswer>;
  /** `POST /relay/v1/submission/messages`, retried by the caller while the edge is unreachable. */
  submit(request: SubmissionRequest, signal?: AbortSignal): Promise<SubmissionAnswer>;
  /** Where each message is written (fsynced) before it is handed over. */
  spool: Spool<SubmissionSpoolMeta>;
  authFailures: AuthFailures;
  log: Log;
  /** Why the spool cannot take mail now (`452 4.3.1`), or null. */
  admission?: () => Promise<string | null>;
  /** How long a message's hand-over may keep retrying an unreachable edge before the client is told `451`. Default 30000 ms. */
  handoverTimeoutMs?: number;
  /** Aborted when the node stops: hand-overs in flight end with `451`. */
  stopping?: AbortSignal;
  /**
   * Answering at the node (docs/submission.md, "Answered at the node"): the keys' leases, the batch
   * hand-over and the Message-IDs answered lately. Without them every message waits for the edge's verdict.
   */
  fast?: { leases: LeaseBook; handover: Handover; recent: RecentSubmissions };
}
