// "Forward third": the spool is read oldest first, each message is parsed and
// handed to the edge, and it leaves the spool only once the edge acknowledged
// it (200), or for `dead/` when the edge refuses it for good (400). A forward
// too large for the edge goes as the raw message alone (stored `failed`),
// never to `dead/`, and so does one whose parsed parts the edge refuses (400):
// only a raw-only forward the edge refuses goes to `dead/`. With a backlog
// (two or more due), several messages go in one batch (`forwardBatch`), each
// settled by its own result exactly as its single forward would be.
import { openAsBlob } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Backoff, backoffDelay, sleep, type BackoffOptions } from '../../edge/backoff.js';
import { retrying, RetryWaits } from '../../edge/retry.js';
import { encodeForward, inMemory, type EncodedForward, type ForwardRequest, type InMemoryForward } from '../../edge/client.js';
import { EdgeContractRefusedError, EdgeRateLimitedError, EdgeRefusedError, EdgeUnavailableError, isFatalEdgeError } from '../../edge/errors.js';
import type { SpooledMeta } from '../spool-store/spooled-message.js';
import {
  edgeTakesRecipient, FORWARD_BATCH_MAX_MESSAGES, forwardingBodyLimit, forwardingMetaLimit,
  type ForwardAnswer, type ForwardBatchAnswer, type ForwardBatchResult, type InboundMeta,
} from '@edgemail/shared';
import { SpoolEntryNotFoundError, type Spool } from '../../spool/index.js';
import type { Log } from '../../log.js';
import { asciiRecipient } from '../listener/on-rcpt-to.js';
import { buryMessage, escapeControls, type DeadLetters } from './dead-letters.js';
import { blobReadable, clip, parseMessage, unparsed } from './parse-message.js';

export interface ForwarderOptions {
  spool: Spool<SpooledMeta>;
  /** `edge.forwardInbound`. */
  forward: (request: EncodedForward, signal: AbortSignal) => Promise<ForwardAnswer>;
  /**
   * `edge.forwardInboundBatch`: with a backlog, several messages in one
   * request. Without it every message goes on its own.
   */
  forwardBatch?: (requests: InMemoryForward[], signal: AbortSignal) => Promise<ForwardBatchAnswer>;
  /**
   * Most messages in one batch. Default 16: the edge's per-request work
   * (credential, limiter, recipients' query, statement) is shared by all of
   * them, and 16 small messages are still a small upload.
   */
  batchSize?: number;
  /**
   * `relay_node.inbound.max_message_size`: a forward is sized against the
   * edge's limits for it (`forwardingBodyLimit`, `forwardingMetaLimit`)
   * before it is sent, and sent as the raw message alone when over them.
   */
  maxMessageSize: number;
  /** Where refused messages go (counted for the heartbeat); `<spool>/dead/` uncounted by default. */
  deadLetters?: Pick<DeadLetters, 'bury'>;
  log: Log;
  /** Told when the edge revokes the node or refuses its credential; the forwarder has stopped by then. */
  onFatal: (err: Error) => void;
  /**
   * Messages forwarded at once. Default 4: each forward spends most of its
   * time waiting on the edge, so two in flight left the edge idle between
   * them (drain ~100 msg/s on a 2-core machine, ~130 with 4, ~155 with 8,
   * where the CPU becomes the bound and the listener pays for it).
   */
  concurrency?: number;
  backoff?: BackoffOptions;
  /** Parsing deadline per message, ms. */
  parseTimeoutMs?: number;
  /** With nothing to do, look at the spool again after this long even without a notify(), ms. Default 30000. */
  idlePollMs?: number;
}

export interface Forwarder {
  /** Starts the loop; it picks up what the spool already holds (a restart resumes here). */
  start(): void;
  /** A message was spooled: look now rather than at the next poll. */
  notify(): void;
  /**
   * The edge answers again (a heartbeat got through): end a wait for an
   * unreachable edge now rather than at the end of its backoff. A wait asked
   * for by a 429 is kept.
   */
  resume(): void;
  /** Stops taking messages and aborts the ones in flight (they stay spooled); resolves when the loop has ended. */
  stop(): Promise<void>;
}

/**
 * Refusals that will not change on a retry: a parsed forward is sent again as
 * the raw message alone, and a raw-only one goes to `dead/`. Not 413: a
 * message too large for the edge is sent again as its raw bytes alone, and if
 * even those are too large it waits (the edge's `inbound.max_message_size` is
 * below the node's, which an operator fixes).
 */
const PERMANENT = { has: (status: number) => status >= 400 && status < 500 && !RETRIED_4XX.has(status) };
/**
 * The 4xx a message waits out: 401 (fatal to the node, handled before), 404,
 * 411 and 415 (an edge older or newer than the node, mid-upgrade: fixed by
 * the upgrade, not by the message), 408 (a body cut short), 413 (handled on
 * its own: raw-only, then kept for the operator) and 429 (Retry-After). Any
 * other 4xx (400, 403, 409, 422, …) refuses the same forward again: retrying
 * it would hold the message in the spool forever, so it goes to dead/.
 */
const RETRIED_4XX = new Set([401, 404, 408, 411, 413, 415, 429]);
/**
 * A message up to this size (as spooled) is read into memory once, parsed
 * from there and sent as one buffer; a larger one is streamed from its file
 * (read twice: to parse, then to send). Reading a small message through a
 * file-backed Blob, twice, cost more CPU than the rest of its forward.
 */
const IN_MEMORY_BYTES = 1_048_576;

/** Answers that mean the edge as a whole is not there: everyone waits, not just this message. */
const EDGE_DOWN = new Set([502, 503, 504]);

/** A 429, or the edge not there (network, 502/503/504): every message waits, not just this one. */
const stallsEveryone = (err: unknown): err is EdgeRateLimitedError | EdgeUnavailableError =>
  // A contract refusal (426) is the edge's answer to every forward alike until one side is upgraded.
  err instanceof EdgeRateLimitedError || err instanceof EdgeContractRefusedError || (err instanceof EdgeUnavailableError && (err.status === null || EDGE_DOWN.has(err.status)));

/** After an edge answered a batch 404 or 415 (older than batches), this long before trying one again, ms. */
const BATCH_RETRY_AFTER_MS = 10 * 60_000;
/** The route a batch's per-message results stand for: each is what the single forward would have answered. */
const SINGLE_ROUTE = 'POST /relay/v1/inbound';

/** The forward that stopped a pass, and why. */
interface Stall {
  id: string;
  err: EdgeRateLimitedError | EdgeUnavailableError;
}

/**
 * @example
 * const forwarder = createForwarder({ spool, forward: (r, s) => edge.forwardInbound(r, s), log, onFatal });
 * forwarder.start();
 * // in the listener's store: spool.write(...) then forwarder.notify()
 */
export function createForwarder(options: ForwarderOptions): Forwarder {
  const { spool, log } = options;
  const deadLetters = options.deadLetters ?? { bury: (id: string, reason: string) => buryMessage(spool, id, reason).then(() => undefined) };
  const bodyLimit = forwardingBodyLimit(options.maxMessageSize);
  const metaLimit = forwardingMetaLimit(options.maxMessageSize);
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const batchSize = Math.min(FORWARD_BATCH_MAX_MESSAGES, Math.max(1, options.batchSize ?? 16));
  /** When an edge last refused the batch route as unknown (404, 415): one by one until BATCH_RETRY_AFTER_MS later. */
  let batchesRefusedAt = -Infinity;
  const batching = () => options.forwardBatch !== undefined && batchSize > 1 && Date.now() - batchesRefusedAt > BATCH_RETRY_AFTER_MS;
  const idlePollMs = options.idlePollMs ?? 30_000;
  const abort = new AbortController();
  const edgeBackoff = new Backoff(options.backoff);
  /** Per-message waits after a failure that may be the message's own (a 500). */
  const retries = new Map<string, { attempt: number; notBefore: number }>();
  /** The wait after a 429 or an unreachable edge, which resume() may end. */
  const pauses = new RetryWaits();
  /** The message whose forward stopped the last pass, for the log line of the wait. */
  let stalled: Stall | null = null;
  /** Said once per outage at warn (each further wait is a debug line); cleared by a forward that gets through. */
  let edgeDownSaid = false;
  let stopped = false;
  let woken = false;
  let wake: (() => void) | null = null;
  let loop: Promise<void> | null = null;

  /** Waits `ms`, or less when notify(), resume() or stop() comes (the loop then looks again). */
  const idle = async (ms: number) => {
    if (woken) {
      woken = false;
      return;
    }
    const woke = new Promise<void>((resolve) => {
      wake = resolve;
    });
    await Promise.race([woke, sleep(ms, abort.signal)]);
    wake = null;
    woken = false;
  };

  /** The same message without its parsed parts: the raw bytes and the envelope only. */
  const rawOnly = (request: ForwardRequest, why: string): EncodedForward => {
    // `why` may quote the edge's refusal, which may quote the sender's bytes.
    const { parsed } = unparsed(`${escapeControls(why)}; only the raw message is kept`);
    log.warn('inbound message not forwardable with its parsed parts; forwarding its raw bytes only', { id: request.meta.spool_id, why: parsed.error });
    return encodeForward({ meta: { ...request.meta, parsed }, raw: request.raw, rawBytes: request.rawBytes, attachments: [] });
  };

  const prepare = async (id: string): Promise<EncodedForward> => {
    const entry = await spool.read(id);
    const m = entry.meta;
    const gone = (err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOENT' ? new SpoolEntryNotFoundError(id) : err;
    };
    const file = join(spool.dir, `${id}.eml`);
    let raw: Blob;
    let rawBytes: Uint8Array | undefined;
    if (entry.size <= IN_MEMORY_BYTES) {
      rawBytes = Buffer.concat([Buffer.from(m.trace_headers, 'utf8'), await readFile(file).catch(gone)]);
      raw = new Blob([rawBytes as Uint8Array<ArrayBuffer>], { type: 'message/rfc822' });
    } else {
      // File-backed: the upload streams from disk and the bytes are never held whole.
      raw = new Blob([m.trace_headers, await openAsBlob(file).catch(gone)], { type: 'message/rfc822' });
    }
    const input = rawBytes ? Readable.from([rawBytes]) : blobReadable(raw);
    const { parsed, attachments } = await parseMessage(input, { timeoutMs: options.parseTimeoutMs });
    // Spooled before the upgrade a recipient may still carry U-labels, which
    // no registered name matches (asciiRecipient is idempotent). One the edge
    // cannot take (over 320 characters once in A-labels) would have it refuse
    // the whole message: left out, and said.
    const recipients = [...new Set(m.rcpt_to.map(asciiRecipient))];
    const rcptTo = recipients.filter(edgeTakesRecipient);
    if (rcptTo.length < recipients.length) log.warn('inbound recipients the edge cannot store are left out of the forward', { id, recipients: recipients.filter((r) => !edgeTakesRecipient(r)).map(escapeControls) });
    const meta: InboundMeta = {
      spool_id: id,
      received_at: m.received_at,
      client_ip: clip(m.client_ip, 64),
      // smtp-server takes any EHLO name up to its line length; the edge takes
      // 255 characters (RFC 5321's domain length). The name as given stays in
      // the message's Authentication-Results (smtp.helo).
      helo: clip(m.helo, 255),
      mail_from: clip(m.mail_from, 320),
      rcpt_to: rcptTo,
      size: raw.size,
      auth: m.auth,
      dmarc_policy: m.dmarc_policy,
      smtp_rejected: m.smtp_rejected,
      spam: m.spam ?? null,
      spam_rejected: m.spam_rejected ?? false,
      parsed,
    };
    if (!parsed.ok) log.warn('inbound message could not be parsed; forwarding its raw bytes only', { id, error: parsed.error });
    // Sized before anything is uploaded: the edge refuses a body over its limits with 413.
    const encoded = encodeForward({ meta, raw, rawBytes, attachments });
    if (encoded.metaLength > metaLimit) return rawOnly(encoded, `too large to forward parsed: its parsed text and headers take ${encoded.metaLength} bytes, over the edge's ${metaLimit}`);
    if (encoded.size > bodyLimit) return rawOnly(encoded, `too large to forward parsed: ${encoded.size} bytes with its parsed parts, over the edge's ${bodyLimit}`);
    return encoded;
  };

  /**
   * One forward. A parsed forward the edge refuses as too large (413) or as
   * invalid (400, 422: some parsed value over its limits) is sent again as the
   * raw message alone, stored `failed` naming why: the refusal is about the
   * parts, and only a raw-only forward refused for good goes to `dead/`.
   */
  const send = async (request: EncodedForward): Promise<ForwardAnswer> => {
    try {
      return await options.forward(request, abort.signal);
    } catch (err) {
      return recover(request, err);
    }
  };

  /** After a refusal of a forward with its parsed parts: the raw message alone, at once (else the refusal stands). */
  const recover = async (request: EncodedForward, err: unknown): Promise<ForwardAnswer> => {
    if (!(err instanceof EdgeRefusedError) || !request.meta.parsed.ok) throw err;
    if (err.status === 413) return options.forward(rawOnly(request, `too large for the edge with its parsed parts (${err.message})`), abort.signal);
    if (err.status !== null && PERMANENT.has(err.status)) return options.forward(rawOnly(request, `the edge refused its parsed parts (${err.message})`), abort.signal);
    throw err;
  };

  /** One message on its own; a failure of the edge as a whole (429, unreachable) is returned for the pass to stop on. */
  const forwardOne = (id: string): Promise<Stall | undefined> => settle(id, async () => {
    const request = await prepare(id);
    return { request, answer: await send(request) };
  });

  /**
   * What becomes of one message once its forward (alone or in a batch) is
   * answered: removed from the spool after its acknowledgement, moved to
   * `dead/` on a refusal for good, else kept for a retry.
   */
  const settle = async (id: string, attempt: () => Promise<{ request: EncodedForward; answer: ForwardAnswer }>): Promise<Stall | undefined> => {
    try {
      const { request, answer } = await attempt();
      await spool.remove(id);
      retries.delete(id);
      edgeBackoff.reset();
      if (edgeDownSaid) log.info('the edge takes inbound messages again', { id });
      edgeDownSaid = false;
      // A receipt's one line at the default level: the records' ids as the API
      // shows them, who sent it from where, and the verdicts.
      const { meta } = request;
      const fields = {
        id, records: answer.inbound_emails, duplicate: answer.duplicate,
        from: meta.mail_from, to: meta.rcpt_to, client: meta.client_ip, bytes: meta.size,
        auth: { spf: meta.auth.spf, dkim: meta.auth.dkim, dmarc: meta.auth.dmarc, aligned: meta.auth.aligned },
      };
      if (!answer.inbound_emails.length && !answer.duplicate) log.warn('forwarded, but no project owns any recipient any more', fields);
      else if (meta.smtp_rejected) log.info('inbound message refused by DMARC policy (550 5.7.1); record kept', fields);
      else if (meta.spam_rejected) log.info('inbound message refused as spam (550 5.7.1); record kept', { ...fields, spam: meta.spam });
      else log.info('inbound message forwarded', fields);
    } catch (err) {
      if (stopped) return; // aborted by stop(): the message stays spooled for the next start
      if (err instanceof SpoolEntryNotFoundError) {
        retries.delete(id);
        return;
      }
      if (isFatalEdgeError(err)) {
        stopped = true;
        abort.abort();
        options.onFatal(err);
        return;
      }
      if (err instanceof EdgeRefusedError && err.status !== null && PERMANENT.has(err.status)) {
        retries.delete(id);
        const buried = await deadLetters.bury(id, err.message).then(() => true, (buryErr: unknown) => {
          log.error('could not move a refused message to dead/', { id, error: String(buryErr) });
          return false;
        });
        if (buried) log.error('the edge refused an inbound message for good; moved to dead/', { id, dir: join(spool.dir, 'dead'), error: escapeControls(err.message) });
        return;
      }
      if (err instanceof EdgeRefusedError && err.status === 413) {
        // Even the raw message is over the edge's limit: kept, and retried below.
        log.error('the edge refuses this message as too large even without its parsed parts: its inbound.max_message_size is below this node\'s; the message stays spooled', { id, error: err.message });
      }
      if (stallsEveryone(err)) return { id, err };
      // A 500, a 404 from an edge without the route yet, a local read error:
      // this message waits its own backoff, the others go on.
      const retry = retries.get(id) ?? { attempt: 0, notBefore: 0 };
      const wait = backoffDelay(retry.attempt++, options.backoff);
      retry.notBefore = Date.now() + wait;
      retries.set(id, retry);
      log.warn('inbound message not forwarded; will retry', { id, attempt: retry.attempt, wait_ms: wait, error: String(err) });
    }
  };

  /** One message's result in a batch, as its single forward's answer (or refusal) would have been. */
  const resultOf = async (request: EncodedForward, result: ForwardBatchResult): Promise<ForwardAnswer> => {
    if ('inbound_emails' in result) return { inbound_emails: result.inbound_emails, duplicate: result.duplicate };
    if (result.status === 429) throw new EdgeRateLimitedError(SINGLE_ROUTE, result.retry_after === undefined ? null : result.retry_after * 1000);
    if (PERMANENT.has(result.status)) return recover(request, new EdgeRefusedError(SINGLE_ROUTE, result.status, result.error));
    // Anything else (413: its meta too large for a batch, or past the batch's
    // storage calls) is forwarded again at once, on its own.
    return send(request);
  };

  /** Messages one after the other on their own (no more forwards in flight than the worker's one); stops at a stall. */
  const oneByOne = async (prepared: { id: string; request: EncodedForward }[]): Promise<Stall | undefined> => {
    for (const { id, request } of prepared) {
      if (stopped) return undefined;
      const stall = await settle(id, async () => ({ request, answer: await send(request) }));
      if (stall) return stall;
    }
    return undefined;
  };

  /**
   * Several messages: those held in memory and within the edge's limits for
   * one body go in one batch, the rest one by one. Each message leaves the
   * spool only after its own result says it is stored.
   */
  const forwardMany = async (ids: string[]): Promise<Stall | undefined> => {
    const batch: { id: string; request: InMemoryForward }[] = [];
    const alone: { id: string; request: EncodedForward }[] = [];
    let bytes = 0;
    let metaBytes = 0;
    for (const id of ids) {
      let request: EncodedForward;
      try {
        request = await prepare(id);
      } catch (err) {
        const stall = await settle(id, () => Promise.reject(err));
        if (stall) return stall;
        continue;
      }
      if (inMemory(request) && bytes + request.size <= bodyLimit && metaBytes + request.metaLength <= metaLimit) {
        batch.push({ id, request });
        bytes += request.size;
        metaBytes += request.metaLength;
      } else {
        alone.push({ id, request });
      }
    }
    if (batch.length < 2) return oneByOne([...batch, ...alone]);
    let answer: ForwardBatchAnswer;
    try {
      answer = await options.forwardBatch!(batch.map((b) => b.request), abort.signal);
      // A message leaves the spool on its own result only: results that do not line up are not trusted.
      if (answer.results.length !== batch.length) throw new Error(`the edge answered ${answer.results.length} results to a batch of ${batch.length}`);
      const astray = answer.results.findIndex((r, i) => r.spool_id !== null && r.spool_id !== batch[i]!.id);
      if (astray >= 0) throw new Error(`the edge answered result ${astray} of a batch for ${answer.results[astray]!.spool_id}, not ${batch[astray]!.id}`);
    } catch (err) {
      if (stopped) return undefined;
      if (isFatalEdgeError(err)) return settle(batch[0]!.id, () => Promise.reject(err));
      if (stallsEveryone(err)) return { id: batch[0]!.id, err };
      if (err instanceof EdgeRefusedError && (err.status === 404 || err.status === 415)) {
        batchesRefusedAt = Date.now();
        log.info('the edge takes no batched forwards (older than them); forwarding one by one', { status: err.status, retry_in_ms: BATCH_RETRY_AFTER_MS });
      } else {
        log.warn('a batched forward failed; forwarding its messages one by one', { ids: batch.map((b) => b.id), error: String(err) });
      }
      return oneByOne([...batch, ...alone]);
    }
    const stalls = await Promise.all(batch.map((b, i) => settle(b.id, async () => ({ request: b.request, answer: await resultOf(b.request, answer.results[i]!) }))));
    return stalls.find(Boolean) ?? oneByOne(alone);
  };

  /**
   * One pass over the spool, oldest first, `concurrency` at a time. When the
   * edge as a whole asks to wait (429) or cannot be reached, no further
   * message is started and the pass throws that failure: the retry loop then
   * waits for every message at once (Retry-After, or the backoff).
   */
  const pass = async (): Promise<void> => {
    const now = Date.now();
    let ids: string[];
    try {
      ids = await spool.list();
    } catch (err) {
      log.error('cannot list the spool', { dir: spool.dir, error: String(err) });
      await idle(edgeBackoff.next());
      return;
    }
    const present = new Set(ids);
    for (const id of retries.keys()) if (!present.has(id)) retries.delete(id);
    const due = ids.filter((id) => (retries.get(id)?.notBefore ?? 0) <= now);
    if (!due.length) {
      const next = Math.min(...[...retries.values()].map((r) => r.notBefore), now + idlePollMs);
      await idle(next - now);
      return;
    }
    let cursor = 0;
    let stall: Stall | undefined;
    const worker = async () => {
      while (!stopped && !stall && cursor < due.length) {
        // A lone message goes at once as itself; a backlog goes in full
        // batches (up to batchSize), the next worker taking what is left.
        // Fewer, fuller requests: each costs the node a fetch, a spool list
        // and its share of the edge's per-request work (credential, limiter,
        // recipients' query, statement), and under a steady stream the
        // messages that arrive while one batch is in flight make the next.
        const left = due.length - cursor;
        const take = batching() && left >= 2 ? Math.min(batchSize, left) : 1;
        const ids = due.slice(cursor, cursor + take);
        cursor += take;
        const stopping = take === 1 ? await forwardOne(ids[0]!) : await forwardMany(ids);
        stall ??= stopping;
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, due.length) }, worker));
    if (stall) {
      stalled = stall;
      throw stall.err;
    }
  };

  /** The wait's one line: a 429 at warn; an unreachable edge at warn once per outage, each further wait at debug. */
  const sayWait = (err: unknown, wait: number) => {
    const id = stalled?.id;
    if (err instanceof EdgeRateLimitedError) {
      log.warn('the edge asks to slow down; messages stay spooled', { id, wait_ms: wait });
      return;
    }
    const fields = { id, wait_ms: wait, error: err instanceof Error ? err.message : String(err) };
    if (edgeDownSaid) log.debug?.('the edge is unreachable; messages stay spooled', fields);
    else log.warn('the edge is unreachable; messages stay spooled (said once until it answers again)', fields);
    edgeDownSaid = true;
  };

  const run = async () => {
    while (!stopped) {
      try {
        await retrying(pass, { signal: abort.signal, backoff: edgeBackoff, retryable: stallsEveryone, waits: pauses, onRetry: sayWait });
      } catch (err) {
        if (stopped) return; // stop() ended the wait: the messages stay spooled for the next start
        throw err;
      }
    }
  };

  return {
    start() {
      loop ??= run().catch((err: unknown) => log.error('forwarder stopped on an unexpected error', { error: String(err) }));
    },
    notify() {
      woken = true;
      wake?.();
    },
    resume() {
      // A 429's wait is kept. Debug: the heartbeat says the edge answers again, the first forward through says the rest.
      if (pauses.resume()) log.debug?.('the edge answers again; forwarding resumes');
    },
    async stop() {
      stopped = true;
      abort.abort();
      wake?.();
      await loop;
    },
  };
}
