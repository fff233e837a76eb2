// onMailFrom: where a transaction starts, so where a session's message count
// and the spool's room are checked; and a sender may declare the message size
// (RFC 1870 SIZE=), one above the limit is refused before any data is sent.
import type { SMTPServerOptions } from 'smtp-server';
import { smtpReply } from './smtp-reply.js';
import { eightBitWithoutSmtpUtf8 } from './smtputf8.js';

export interface OnMailFromDeps {
  /** Why the spool cannot take new mail now (`452 4.3.1 <reason>`), or null; none: always accepted. */
  admission?: () => Promise<string | null>;
  /** `inbound.max_message_size`, in bytes. */
  maxMessageSize: number;
  /** `inbound.max_messages_per_session`; 0 disables. */
  maxMessagesPerSession: number;
}

/**
 * In order:
 * - `553 5.6.7` for a sender whose local part is not ASCII without the
 *   SMTPUTF8 parameter (RFC 6531);
 * - `552 5.3.4` for `MAIL FROM:<...> SIZE=n` above the limit. smtp-server
 *   already does so when its `size` option is set and advertised; this keeps
 *   the rule with the listener even if the advertisement is hidden;
 * - `421 4.7.0` and the session closed when it already sent
 *   `maxMessagesPerSession` messages (answered or refused, each counts);
 * - `452 4.3.1` while the spool cannot take mail (`deps.admission`).
 * Anyone may send to an MX, so the sender itself is not judged here: SPF and
 * DMARC judge it once the message is in.
 */
export const onMailFrom = (deps: OnMailFromDeps): NonNullable<SMTPServerOptions['onMailFrom']> => (address, session, callback) => {
  const eightBit = eightBitWithoutSmtpUtf8(address.address, session);
  if (eightBit) return callback(eightBit);
  const declared = Number((address.args && address.args.SIZE) ?? 0);
  if (declared > deps.maxMessageSize) {
    return callback(smtpReply(552, `5.3.4 Message size ${declared} exceeds the fixed maximum message size of ${deps.maxMessageSize} bytes`));
  }
  // `transaction` is 1 for the session's first message, 2 for the next, ...
  if (deps.maxMessagesPerSession > 0 && session.transaction > deps.maxMessagesPerSession) {
    return callback(smtpReply(421, `4.7.0 Too many messages in this session (at most ${deps.maxMessagesPerSession}), closing; connect again to go on`));
  }
  if (!deps.admission) return callback();
  deps.admission().then(
    (reason) => callback(reason ? smtpReply(452, `4.3.1 ${reason}`) : undefined),
    () => callback(smtpReply(452, '4.3.1 Cannot check the spool right now, try again later')),
  );
};
