// One log line per refusal of a MAIL FROM or a RCPT TO (relay-node/README.md,
// "Logs": a refused recipient or sender is a line, as a refused message is),
// in the form of `inbound message refused`: the session, the client, the
// address and the reply.
import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import type { Log } from '../log.js';

type AddressHandler = (address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void) => void;

/**
 * `handler`, logging at info `<what>` with `session`, `client`, `field`
 * (`from` or `to`: the address) and `reply` (`550 5.1.1 …`) whenever it
 * answers with a refusal.
 *
 * @example onRcptTo: logRefusals(log, 'inbound recipient refused', 'to', onRcptTo(deps))
 */
export function logRefusals(log: Log, what: string, field: 'from' | 'to', handler: AddressHandler): AddressHandler {
  return (address, session, callback) => handler(address, session, (err) => {
    if (err) {
      const code = (err as { responseCode?: number }).responseCode;
      log.info(what, { session: session.id, client: session.remoteAddress, [field]: address.address, reply: code ? `${code} ${err.message}` : err.message });
    }
    callback(err);
  });
}
