// onData: the submitted message is written to the spool (fsynced), read into
// the send's fields, and handed to the edge; the reply is the edge's verdict.
// 250 only once the edge answered that it committed the rows.
import { PassThrough } from 'node:stream';
import type { SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import type { SubmissionAnswer } from '@edgemail/shared';
import { guardMessage, isSmtpReplyError, smtpReply, type MessageLimits, type SmtpDataStream } from '../smtp/index.js';
import { EdgeRefusedError } from '../edge/errors.js';
import { retrying } from '../edge/retry.js';
import { readSubmissionAndId } from './read-submission.js';
import type { SubmissionDeps, SubmissionUser } from './types.js';

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
 * - `250 2.0.0` once the edge committed the rows.
 * The spool entry goes once the edge answered (or gave up): the reply decides who has the message.
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
  const head = new PassThrough();
  head.on('error', () => undefined); // the guard destroys it with its refusal; the refusal is answered below
  const envelope = {
    mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
    rcptTo: session.envelope.rcptTo.map((r) => r.address),
  };
  const stored = refusal
    ? Promise.resolve(null)
    : deps.spool.write(head, {
      session: session.id, client_address: session.remoteAddress, mail_from: envelope.mailFrom, rcpt_to: envelope.rcptTo,
      project_id: user.projectId, received_at: new Date().toISOString(),
    }).then((s) => s, (err: unknown) => err as Error);
  if (refusal) head.resume(); // read and dropped; answered after the dot
  const outcome = await guardMessage(stream, head, deps.limits);
  const spooled = await stored;
  // A refusal or an abort destroyed `head`, so the spool write failed and left nothing.
  if (outcome.aborted) throw new Error('the client left before the end of the message');
  if (outcome.refusal) {
    deps.log.info('submission refused: over a size cap', { ...fields, reply: outcome.refusal.message });
    throw outcome.refusal;
  }
  if (refusal) throw smtpReply(452, `4.3.1 ${refusal}`);
  if (!spooled || spooled instanceof Error) {
    deps.log.error('submission not spooled', { ...fields, error: String(spooled) });
    throw smtpReply(451, '4.3.0 Local error while storing the message, try again later');
  }

  // Where the time went, for the one line per message: the data and its fsync, the MIME, the edge.
  const spooledAt = performance.now();
  try {
    const entry = await deps.spool.read(spooled.id);
    let message, messageId, date;
    try {
      ({ message, messageId, date } = await readSubmissionAndId(entry.openBody(), envelope.rcptTo));
    } catch (err) {
      throw smtpReply(550, `5.6.0 The message cannot be read as MIME: ${(err as Error).message}`);
    }
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
