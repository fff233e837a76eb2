// onMailFrom: a sender may declare the message size (RFC 1870 SIZE=); one
// above the limit is refused before any data is sent.
import type { SMTPServerOptions } from 'smtp-server';
import { smtpReply } from './smtp-reply.js';

export interface OnMailFromDeps {
  /** `inbound.max_message_size`, in bytes. */
  maxMessageSize: number;
}

/**
 * Refuses `MAIL FROM:<...> SIZE=n` above the limit with `552 5.3.4`.
 * smtp-server already does so when its `size` option is set and advertised;
 * this keeps the rule with the listener even if the advertisement is hidden.
 * Anyone may send to an MX, so the sender itself is not judged here: SPF and
 * DMARC judge it once the message is in.
 */
export const onMailFrom = (deps: OnMailFromDeps): NonNullable<SMTPServerOptions['onMailFrom']> => (address, _session, callback) => {
  const declared = Number((address.args && address.args.SIZE) ?? 0);
  if (declared > deps.maxMessageSize) {
    return callback(smtpReply(552, `5.3.4 Message size ${declared} exceeds the fixed maximum message size of ${deps.maxMessageSize} bytes`));
  }
  callback();
};
