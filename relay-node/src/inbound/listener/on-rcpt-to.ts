// onRcptTo: an MX accepts mail only for domains a project registered; the
// edge knows which, so the answer comes from `recipientDomainAccepted`.
import { domainToASCII } from 'node:url';
import type { SMTPServerOptions } from 'smtp-server';
import { MAX_RECIPIENT_DOMAINS, splitAddress } from '@edgemail/shared';
import { smtpReply } from '../../smtp/smtp-reply.js';
import { eightBitWithoutSmtpUtf8 } from '../../smtp/smtputf8.js';
import type { Log } from '../../log.js';
import type { NodeRules } from '../rules/node-rules.js';

export interface OnRcptToDeps {
  recipientDomainAccepted(domain: string): Promise<boolean>;
  recipientDomainFull?(domain: string): boolean;
  /** Refusals by routing rules that the recipient and sender decide (docs/inbound-rules.md). */
  rules?: NodeRules;
  log: Log;
}

/**
 * The domain of an address in the form the edge stores it: lower case, A-label
 * (punycode), no trailing dot. Null for address literals (`user@[192.0.2.1]`)
 * and anything that is not a domain name.
 */
export function recipientDomain(address: string): string | null {
  const parts = splitAddress(address);
  if (!parts) return null;
  const domain = domainToASCII(parts.domain.replace(/\.$/, '')).toLowerCase();
  return domain && !domain.startsWith('[') ? domain : null;
}

/**
 * A recipient as it is spooled, forwarded and stored: the local part as
 * given, the domain as `recipientDomain` gives it. smtp-server hands every
 * address over with its domain decoded to U-labels (`xn--bcher-kva` becomes
 * `bücher`), which no registered name matches at the edge. Address literals
 * and domainless `postmaster` are kept as they are.
 *
 * @example asciiRecipient('user@Bücher.test') // 'user@xn--bcher-kva.test'
 */
export function asciiRecipient(address: string): string {
  const domain = recipientDomain(address);
  return domain ? `${splitAddress(address)!.local}@${domain}` : address;
}

/**
 * Accepts a recipient whose domain the edge serves; others get `550 5.1.1`
 * naming the domain, and one whose project's storage quota is reached `452 4.2.2`. When the edge cannot be asked the answer is `451 4.3.0`,
 * so the sender retries instead of bouncing mail we may well accept.
 */
export const onRcptTo = (deps: OnRcptToDeps): NonNullable<SMTPServerOptions['onRcptTo']> => (address, session, callback) => {
  const eightBit = eightBitWithoutSmtpUtf8(address.address, session); // 553 5.6.7 (RFC 6531)
  if (eightBit) return callback(eightBit);
  const domain = recipientDomain(address.address);
  if (!domain) {
    return callback(smtpReply(550, `5.1.1 <${address.address}>: recipient address has no domain this server accepts mail for`));
  }
  // A message the edge could not store in every project it reaches must not get its 250 (RFC 5321 4.5.3.1.10: 452, send the rest later).
  const domains = new Set(session.envelope.rcptTo.map((r) => recipientDomain(r.address)));
  if (!domains.has(domain) && domains.size >= MAX_RECIPIENT_DOMAINS) {
    return callback(smtpReply(452, `4.5.3 <${address.address}>: too many recipient domains in one message (at most ${MAX_RECIPIENT_DOMAINS}); send to the rest in another`));
  }
  deps.recipientDomainAccepted(domain).then(
    (accepted) => {
      if (!accepted) return callback(smtpReply(550, `5.1.1 <${address.address}>: recipient domain ${domain} is not served here`));
      // Over quota is transient: the sender keeps the mail and retries (RFC 3463 4.2.2, mailbox full).
      if (deps.recipientDomainFull?.(domain)) {
        return callback(smtpReply(452, `4.2.2 <${address.address}>: mailbox full, the inbound storage quota for ${domain} is reached; try again later`));
      }
      const refused = deps.rules?.atRcpt(asciiRecipient(address.address), domain, session.envelope.mailFrom ? asciiRecipient(session.envelope.mailFrom.address) : '');
      if (refused) return callback(smtpReply(550, `5.7.1 <${address.address}>: ${refused}`));
      callback();
    },
    (err: unknown) => {
      deps.log.error('inbound recipient check failed', { session: session.id, domain, error: String(err) });
      callback(smtpReply(451, '4.3.0 Cannot check the recipient domain right now, try again later'));
    },
  );
};
