// onRcptTo: at most as many recipients as the send route takes per message.
import type { SMTPServerOptions } from 'smtp-server';
import { eightBitWithoutSmtpUtf8, smtpReply } from '../smtp/index.js';

/**
 * An 8-bit local part without SMTPUTF8 is `553 5.6.7`. One more than `maxRecipients` is `452 4.5.3` (RFC 5321 4.5.3.1.10: the
 * client sends the rest in another transaction), as Postfix's
 * smtpd_recipient_limit answers. Where a recipient may go is decided with
 * the whole message (suppressions, limits), after DATA.
 */
export const onRcptTo = (maxRecipients: number): NonNullable<SMTPServerOptions['onRcptTo']> => (address, session, callback) => {
  const eightBit = eightBitWithoutSmtpUtf8(address.address, session); // 553 5.6.7 (RFC 6531)
  if (eightBit) return callback(eightBit);
  if (session.envelope.rcptTo.length >= maxRecipients) {
    return callback(smtpReply(452, `4.5.3 Too many recipients: at most ${maxRecipients} per message (as on the send API); send the rest in another message`));
  }
  callback();
};
