// The messages between the compose pool (main thread) and its worker threads.
// A worker composes and DKIM-signs many jobs at once, each under its id; the
// signed bytes come back transferred, not copied.
import type { OutboundJob } from '@edgemail/shared';

/** Main thread to worker: compose (and sign, when `job.dkim`) one message, `signTime` the signature's t= (epoch ms). */
export type ToComposeWorker = { type: 'compose'; id: number; job: Pick<OutboundJob, 'message' | 'dkim'>; signTime: number };

/** Why a job could not be composed, as plain data (an Error does not cross a thread boundary with its class). */
export type ComposeFailure =
  /** An address entry is not exactly one mailbox (`AddressRefusedError`): no later attempt composes it either. */
  | { kind: 'address'; field: string; value: string }
  /** Anything else (a key the signer refuses): the message of the error. */
  | { kind: 'other'; message: string };

/** Worker to main thread. */
export type FromComposeWorker =
  /** The worker has loaded and listens; `tid` is its Linux thread id (null elsewhere), for the CPU split of `pnpm bench outbound`. */
  | { type: 'ready'; tid: number | null }
  | { type: 'composed'; id: number; bytes: Uint8Array }
  | { type: 'failed'; id: number; failure: ComposeFailure };
