// onData: the message streams through the caps and any hygiene transforms,
// then to the spool and the verifier at once. The reply waits for the final
// dot, the durable write and the verdicts: 250 is the promise the mail is kept.
import { PassThrough, pipeline, type Readable } from 'node:stream';
import type { SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import { temporaryFailure, type IngestAuthentication } from '../mail-auth/verdicts.js';
import { fanOut } from './fan-out.js';
import { guardMessage, type MessageLimits } from '../../smtp/message-guard.js';
import { isSmtpReplyError, smtpReply } from '../../smtp/smtp-reply.js';
import type { InboundDeps, InboundEnvelope } from './types.js';
import { headerCaptureFor, refusalAtData } from '../rules/at-smtp.js';

export interface OnDataDeps extends Pick<InboundDeps, 'store' | 'authenticate' | 'log' | 'transforms' | 'admission' | 'rules'> {
  limits: MessageLimits;
  /** The listener's host name, for verdicts made up when the verifier itself failed. */
  name: string;
}

/**
 * Receives one message. Replies, in order of precedence:
 * - `552 5.3.4` when the message or its header crossed a cap (after the dot;
 *   nothing is stored);
 * - `452 4.3.1` when the spool could not take mail as the data began
 *   (`deps.admission`: the data is read to the dot and dropped), or ran out of
 *   space writing it (ENOSPC, EDQUOT: the write is undone);
 * - a transform's own refusal (`554 5.5.0` for bare line endings under `reject`);
 * - the store's refusal, or `451 4.3.0` when it failed for a reason of its own;
 * - `550 5.7.1` when DMARC fails on a `p=reject` domain: the message is stored
 *   first, with its verdicts, so the record is kept as the spec asks;
 * - `250 2.6.0` otherwise, only after the store resolved (fsync done).
 */
export const onData = (deps: OnDataDeps): NonNullable<SMTPServerOptions['onData']> => (stream, session, callback) => {
  // Asked again here: space may have gone since MAIL FROM. Refused, smtp-server
  // reads the data to the dot itself and then answers.
  (deps.admission?.() ?? Promise.resolve(null)).then(
    (reason) => (reason ? Promise.reject(smtpReply(452, `4.3.1 ${reason}`)) : receive(deps, stream, session)),
    () => Promise.reject(smtpReply(452, '4.3.1 Cannot check the spool right now, try again later')),
  ).then(
    (text) => callback(null, text),
    (err: Error) => callback(err),
  );
};

async function receive(deps: OnDataDeps, stream: Readable & { sizeExceeded?: boolean }, session: SMTPServerSession): Promise<string> {
  const head = new PassThrough();
  head.on('error', () => undefined); // the guard destroys it with its refusal; the refusal is answered below
  let transformError: Error | null = null;
  const transforms = deps.transforms?.() ?? [];
  if (transforms.length) pipeline([head, ...transforms], (err) => { if (err) transformError = err; });
  const [toStore, toVerify] = fanOut(transforms.at(-1) ?? head, 2) as [PassThrough, PassThrough];
  const headerBlock = headerCaptureFor(deps.rules, session, transforms.at(-1) ?? head);

  const verifying = deps.authenticate(toVerify, {
    ip: session.remoteAddress,
    helo: session.hostNameAppearsAs || '',
    sender: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
    rcptTo: session.envelope.rcptTo.map((r) => r.address),
    queueId: session.id,
  }).catch((err: unknown) => temporaryFailure(session.remoteAddress, deps.name, String(err)));
  const envelope = envelopeOf(session, settleWith(verifying, toVerify));
  const stored = settleWith(deps.store(toStore, envelope), toStore).then(() => null, (err: unknown) => err as Error);

  const outcome = await guardMessage(stream, head, deps.limits);
  const storeError = await stored;
  const verdicts = await envelope.authentication;
  const fields = { session: session.id, client: session.remoteAddress, bytes: (stream as { byteLength?: number }).byteLength };

  if (outcome.aborted) throw new Error('the client left before the end of the message');
  if (outcome.refusal) {
    deps.log.info('inbound message refused: over a size cap', { ...fields, reply: outcome.refusal.message });
    throw outcome.refusal;
  }
  const refusal = [transformError, storeError].find(isSmtpReplyError);
  if (refusal) {
    deps.log.info('inbound message refused', { ...fields, reply: `${refusal.responseCode} ${refusal.message}` });
    throw refusal;
  }
  if (storeError && NO_SPACE.has((storeError as NodeJS.ErrnoException).code ?? '')) {
    deps.log.error('inbound message not stored: the spool is out of space', { ...fields, error: String(storeError) });
    throw smtpReply(452, '4.3.1 Insufficient system storage, try again later');
  }
  if (transformError || storeError) {
    deps.log.error('inbound message not stored', { ...fields, error: String(transformError ?? storeError) });
    throw smtpReply(451, '4.3.0 Local error while storing the message, try again later');
  }
  if (verdicts.dmarcReject) {
    // Debug: the forwarder's one line names the refusal with the record's id.
    deps.log.debug?.('inbound message refused by DMARC policy (record kept)', { ...fields, auth: verdicts.auth });
    throw smtpReply(550, '5.7.1 Message refused: it fails DMARC and the sender domain publishes p=reject');
  }
  if (verdicts.spamReject) {
    // Stored first, as for DMARC: the record is kept (status rejected) and the forwarder logs it.
    deps.log.debug?.('inbound message refused by spam score (record kept)', { ...fields, spam: verdicts.spam });
    throw smtpReply(550, `5.7.1 Message refused as spam: its spam score (${verdicts.spam?.score}) reaches the limit set for its recipients`);
  }
  // A routing rule refusing for every recipient (docs/inbound-rules.md): stored first, as for DMARC; the edge keeps the record `rejected`.
  const ruled = deps.rules && headerBlock ? refusalAtData(deps.rules, session, headerBlock(), verdicts) : null;
  if (ruled) {
    deps.log.debug?.('inbound message refused by a routing rule (record kept)', { ...fields, reply: ruled });
    throw smtpReply(550, `5.7.1 ${ruled}`);
  }
  // Debug: a receipt is one info line, the forwarder's, once the record exists.
  deps.log.debug?.('inbound message accepted', { ...fields, auth: verdicts.auth });
  return 'Message accepted';
}

/** Write errors that mean the disk (or the node's quota) is full: transient for the sender. */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

/** Once a reader of a branch is done (or gave up), stop feeding it so the other reader is not held back. */
function settleWith<T>(work: Promise<T>, branch: PassThrough): Promise<T> {
  return work.finally(() => branch.destroy());
}

function envelopeOf(session: SMTPServerSession, authentication: Promise<IngestAuthentication>): InboundEnvelope {
  const tls = session.secure && session.tlsOptions ? { protocol: session.tlsOptions.version, cipher: session.tlsOptions.name } : null;
  return {
    sessionId: session.id,
    clientAddress: session.remoteAddress,
    clientPort: session.remotePort,
    helo: session.hostNameAppearsAs || '',
    mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
    rcptTo: session.envelope.rcptTo.map((r) => r.address),
    tls,
    receivedAt: new Date(),
    authentication,
  };
}
