// onData: the submitted message is written to the spool (fsynced) and read
// into the send's fields while it arrives. When the key's lease vouches for it
// (docs/submission.md, "Answered at the node") the reply is 250 as soon as it
// is durable, and the hand-over (handover.ts) takes it to the edge in a batch;
// otherwise it is handed to the edge alone and the reply is the edge's verdict.
import { randomUUID } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import type { SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import type { SubmissionAnswer } from '@edgemail/shared';
import { guardMessage, isSmtpReplyError, smtpReply, type MessageLimits, type SmtpDataStream, type SmtpReplyError } from '../smtp/index.js';
import { EdgeRefusedError } from '../edge/errors.js';
import { retrying } from '../edge/retry.js';
import { readSubmissionAndId } from './read-submission.js';
import type { Lease } from './leases.js';
import { contentDigest, idOfKey, recentKey } from './recent.js';
import type { SubmissionDeps, SubmissionSpoolMeta, SubmissionUser } from './types.js';

const DEFAULT_HANDOVER_TIMEOUT_MS = 30_000;

export interface OnDataDeps extends SubmissionDeps {
  limits: MessageLimits;
}

/**
 * Replies, in order of precedence:
 * - `552 5.3.4` over `inbound.max_message_size` (or the header cap), after the dot; nothing kept;
 * - `452 4.3.1` when the spool cannot take mail; `451 4.3.0` when writing it failed;
 * - `550 5.6.0` when the message cannot be read as MIME;
 * - the edge's refusal as it gave it (`452 4.7.0` plan limit, `550 5.7.1` From domain, `550 5.6.0` a field);
 * - `451 4.4.1` when the edge did not answer within the hand-over time (the client sends it again);
 * - `250 2.0.0` once spooled when the lease vouches for it (the entry stays until the batch is answered),
 *   else once the edge committed the rows;
 * - `554 5.6.0` at once for a Message-ID and envelope this node answered with other content.
 * An entry waiting for the edge's own verdict goes once the edge answered (or gave up): the reply decides who has the message.
 */
export const onData = (deps: OnDataDeps): NonNullable<SMTPServerOptions['onData']> => (stream, session, callback) => {
  receive(deps, stream, session).then(
    (text) => callback(null, text),
    (err: Error) => callback(isSmtpReplyError(err) ? err : smtpReply(451, '4.3.0 Local error while taking the message, try again later')),
  );
};

async function receive(deps: OnDataDeps, stream: SmtpDataStream, session: SMTPServerSession): Promise<string> {
  const began = performance.now();
  const user = session.user as unknown as SubmissionUser;
  const refusal = await deps.admission?.().catch(() => 'Cannot check the spool right now, try again later');
  const fields = { session: session.id, client: session.remoteAddress, project: user.projectId };
  // The bytes go to the spool and, kept in memory too, to the parser (no read back from the disk).
  const chunks: Buffer[] = [];
  const head = new Transform({ transform(chunk: Buffer, _enc, done) { chunks.push(chunk); done(null, chunk); } });
  head.on('error', () => undefined); // the guard destroys it with its refusal; the refusal is answered below
  const envelope = {
    mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
    rcptTo: session.envelope.rcptTo.map((r) => r.address),
  };
  // The metadata is written once the message is read and judged: whether it was answered from the lease.
  let decide!: (accepted: SubmissionSpoolMeta['accepted']) => void;
  const decided = new Promise<SubmissionSpoolMeta['accepted']>((resolve) => { decide = resolve; });
  const stored = refusal
    ? Promise.resolve(null)
    : deps.spool.write(head, decided.then((accepted): SubmissionSpoolMeta => ({
      session: session.id, client_address: session.remoteAddress, mail_from: envelope.mailFrom, rcpt_to: envelope.rcptTo,
      project_id: user.projectId, received_at: new Date().toISOString(), ...(accepted ? { accepted } : {}),
    }))).then((s) => s, (err: unknown) => err as Error);
  if (refusal) head.resume(); // read and dropped; answered after the dot
  const outcome = await guardMessage(stream, head, deps.limits);
  if (outcome.aborted || outcome.refusal || refusal) decide(undefined);
  const spooledOrNot = outcome.aborted || outcome.refusal || refusal ? await stored : null;
  void spooledOrNot;
  // A refusal or an abort destroyed `head`, so the spool write failed and left nothing.
  if (outcome.aborted) throw new Error('the client left before the end of the message');
  if (outcome.refusal) {
    deps.log.info('submission refused: over a size cap', { ...fields, reply: outcome.refusal.message });
    throw outcome.refusal;
  }
  if (refusal) throw smtpReply(452, `4.3.1 ${refusal}`);

  let read: Awaited<ReturnType<typeof readSubmissionAndId>> | null = null;
  let judged: Judged = { path: 'edge' };
  try {
    read = await readSubmissionAndId(Readable.from(chunks), envelope.rcptTo);
    judged = await judge(deps, user, session.remoteAddress, envelope, read);
  } catch (err) {
    judged = { path: 'edge' };
    if (!read) deps.log.debug?.('submission not readable as MIME', { ...fields, error: (err as Error).message });
  } finally {
    decide(judged.path === 'lease' ? { id: judged.id, sandbox: judged.lease.sandbox } : undefined);
  }
  const spooled = await stored;
  if (!spooled || spooled instanceof Error) {
    if (judged.path === 'lease') deps.fast!.leases.settle(judged.lease.projectId, envelope.rcptTo.length);
    deps.log.error('submission not spooled', { ...fields, error: String(spooled) });
    throw smtpReply(451, '4.3.0 Local error while storing the message, try again later');
  }
  const spooledAt = performance.now();
  if (judged.path === 'reply') {
    await deps.spool.remove(spooled.id).catch(() => undefined);
    deps.log.info('submission refused at the node', { ...fields, id: spooled.id, reply: judged.reply.message });
    throw judged.reply;
  }
  if (judged.path === 'lease' && read) {
    // Durable, and its recipients taken from the plan's allowance: the node's promise, kept by the hand-over.
    const { fast } = deps;
    fast!.handover.enqueue({
      units: envelope.rcptTo.length,
      item: {
        id: judged.id, spool_id: spooled.id, project_id: judged.lease.projectId, sandbox: judged.lease.sandbox,
        client_address: session.remoteAddress, mail_from: envelope.mailFrom, rcpt_to: envelope.rcptTo, size: spooled.size,
        message: read.message, ...(read.messageId ? { message_id: read.messageId } : {}), ...(read.date ? { date: read.date } : {}),
      },
    });
    deps.log.debug?.('submission accepted', { ...fields, id: spooled.id, message_id: judged.id, rcpt: envelope.rcptTo.length, bytes: spooled.size, ms: { data: Math.round(spooledAt - began) } });
    return `2.0.0 Message accepted as ${judged.id}`;
  }
  try {
    if (!read) {
      try {
        read = await readSubmissionAndId(Readable.from(chunks), envelope.rcptTo);
      } catch (err) {
        throw smtpReply(550, `5.6.0 The message cannot be read as MIME: ${(err as Error).message}`);
      }
    }
    const { message, messageId, date } = read;
    const parsedAt = performance.now();
    const answer = await handOver(deps, {
      spool_id: spooled.id, token: user.token, client_address: session.remoteAddress,
      mail_from: envelope.mailFrom, rcpt_to: envelope.rcptTo, size: spooled.size, message,
      // With the envelope, what recognises this message sent again (docs/submission.md, "Sent twice?").
      ...(messageId ? { message_id: messageId } : {}),
      // Kept on the sent message when valid, as a valid Message-ID is (docs/submission.md, "Kept as written").
      ...(date ? { date } : {}),
    });
    if (!answer.accepted) {
      deps.log.info('submission refused by the edge', { ...fields, id: spooled.id, reply: `${answer.code} ${answer.text}` });
      throw smtpReply(answer.code, answer.text);
    }
    deps.log.info('submission accepted', {
      ...fields, id: spooled.id, message_id: answer.message_id, from: message.from, rcpt: envelope.rcptTo.length, bytes: spooled.size,
      emails: answer.emails.map((e) => ({ id: e.id, status: e.status })),
      ms: { data: Math.round(spooledAt - began), parse: Math.round(parsedAt - spooledAt), edge: Math.round(performance.now() - parsedAt) },
    });
    return `2.0.0 Message accepted as ${answer.message_id}`;
  } finally {
    await deps.spool.remove(spooled.id).catch(() => undefined);
  }
}

/**
 * How a message is answered: from the key's lease (`lease`: 250 once spooled, handed over in a batch),
 * at once (`reply`: the same Message-ID and envelope with other content), or by the edge's own verdict
 * (`edge`: whatever the lease cannot vouch for, so that every refusal keeps the edge's own words).
 */
type Judged = { path: 'lease'; id: string; lease: Lease } | { path: 'reply'; reply: SmtpReplyError } | { path: 'edge' };

/** Headers that ask for what only the edge judges (a stream's rules, one-click unsubscribe). */
const EDGE_JUDGED_HEADER = /^x-edgemail-/i;
const MAX_CUSTOM_HEADERS = 50;
const MAX_HEADER_VALUE = 2000;

async function judge(
  deps: OnDataDeps, user: SubmissionUser, client: string, envelope: { mailFrom: string; rcptTo: string[] },
  read: Awaited<ReturnType<typeof readSubmissionAndId>>,
): Promise<Judged> {
  const { fast } = deps;
  if (!fast) return { path: 'edge' };
  const { message, messageId } = read;
  const domain = singleMailboxDomain(message.from);
  const headers = Object.entries(message.headers);
  if (!domain || !message.to.length || (message.html === undefined && message.text === undefined)
    || headers.length > MAX_CUSTOM_HEADERS || headers.some(([name, value]) => EDGE_JUDGED_HEADER.test(name) || value.length > MAX_HEADER_VALUE || /[\r\n]/.test(value))) {
    return { path: 'edge' };
  }
  const lease = await fast.leases.get(user.token, client, { signal: AbortSignal.timeout(LEASE_TIMEOUT_MS) }).catch(() => null);
  // Refused (revoked, expired…) or not answered: the edge's verdict says why, in its words.
  if (!lease || !('domains' in lease) || lease.projectId !== user.projectId || lease.sandbox !== user.sandbox) return { path: 'edge' };
  if (!lease.domains.has(domain)) return { path: 'edge' };
  let id: string = randomUUID();
  let key: string | null = null;
  if (messageId) {
    key = recentKey(lease.projectId, lease.sandbox, envelope.mailFrom, envelope.rcptTo, messageId);
    const seen = fast.recent.get(key);
    if (seen && seen.content !== contentDigest(message)) {
      return { path: 'reply', reply: smtpReply(554, '5.6.0 a message with this Message-ID and envelope was submitted in the last 24 hours with other content; give a new message a Message-ID of its own') };
    }
    id = idOfKey(key);
  }
  if (!fast.leases.take(lease, envelope.rcptTo.length)) {
    // The allowance is spent: a fresh lease once (other sends may have been counted since), else the edge answers.
    const again = await fast.leases.get(user.token, client, { fresh: true, signal: AbortSignal.timeout(LEASE_TIMEOUT_MS) }).catch(() => null);
    if (!again || !('domains' in again) || !fast.leases.take(again, envelope.rcptTo.length)) return { path: 'edge' };
    if (key) fast.recent.remember(key, id, message);
    return { path: 'lease', id, lease: again };
  }
  if (key) fast.recent.remember(key, id, message);
  return { path: 'lease', id, lease };
}

const LEASE_TIMEOUT_MS = 10_000;

/** The lower-case domain of a From that is exactly one mailbox (`Name <a@b>` or `a@b`), else null. */
function singleMailboxDomain(from: string): string | null {
  const m = /^(?:"(?:[^"\\]|\\.)*"\s*)?<([^<>@\s,]+@([^<>@\s,]+))>$|^([^<>@\s,"]+@([^<>@\s,]+))$/.exec(from.trim());
  const domain = m?.[2] ?? m?.[4];
  return domain ? domain.toLowerCase() : null;
}

/** The edge's verdict, waiting out an unreachable edge (same spool id each time) up to the hand-over time. */
async function handOver(deps: OnDataDeps, request: Parameters<SubmissionDeps['submit']>[0]): Promise<SubmissionAnswer> {
  const limit = AbortSignal.timeout(deps.handoverTimeoutMs ?? DEFAULT_HANDOVER_TIMEOUT_MS);
  const signal = deps.stopping ? AbortSignal.any([limit, deps.stopping]) : limit;
  try {
    return await retrying((() => deps.submit(request, signal)), { signal, backoff: { initialMs: 250, maxMs: 5_000 } });
  } catch (err) {
    if (err instanceof EdgeRefusedError) {
      // The request itself was refused (a body over the route's limit, a field past the contract's bounds): permanent.
      deps.log.warn('submission refused by the edge\'s relay route', { id: request.spool_id, status: err.status, error: err.message });
      throw err.status === 413
        ? smtpReply(552, '5.3.4 Message too large for the service to take')
        : smtpReply(554, `5.6.0 Message refused by the service: ${err.detail}`);
    }
    deps.log.warn('submission not handed over: the edge did not answer', { id: request.spool_id, error: (err as Error).message });
    throw smtpReply(451, '4.4.1 The service cannot take the message right now, try again later');
  }
}
