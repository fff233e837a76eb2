// RFC 6531: a mailbox whose local part is not ASCII may only be named in a
// transaction that declared `MAIL FROM:<…> SMTPUTF8`. Without it the client
// has not asked for (nor checked that every server on the way offers) UTF-8
// addresses, and the rest of the path may mangle or refuse it.
import type { SMTPServerSession } from 'smtp-server';
import { splitAddress } from '@edgemail/shared';
import { smtpReply, type SmtpReplyError } from './smtp-reply.js';

/**
 * `553 5.6.7` (RFC 6531 3.7.4.1: "non-ASCII addresses not permitted for that
 * sender/recipient") for an address with an 8-bit local part in a transaction
 * without SMTPUTF8; null otherwise. The domain is not judged: smtp-server
 * hands it over decoded to U-labels either way, and an A-label needs no UTF-8.
 * `session.envelope.smtpUtf8` is set by the library before `onMailFrom` runs.
 */
export function eightBitWithoutSmtpUtf8(address: string, session: SMTPServerSession): SmtpReplyError | null {
  if ((session.envelope as { smtpUtf8?: boolean }).smtpUtf8) return null;
  const local = splitAddress(address)?.local ?? address;
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(local)) return null;
  return smtpReply(553, `5.6.7 <${address}>: a non-ASCII local part needs MAIL FROM with the SMTPUTF8 parameter (RFC 6531)`);
}
