// onConnect: the per-address session rate, checked when the session opens,
// before the greeting (the spec's "checked when the session opens").
import type { SMTPServerOptions } from 'smtp-server';
import type { SessionRate } from './session-rate.js';
import { smtpReply } from './smtp-reply.js';
import type { Log } from '../log.js';

export interface OnConnectDeps {
  sessionRate: SessionRate;
  log: Log;
}

/**
 * Refuses a session past its address's per-minute allowance with
 * `421 4.7.0` (transient: a well-behaved MTA retries later) and closes it.
 */
export const onConnect = (deps: OnConnectDeps): NonNullable<SMTPServerOptions['onConnect']> => (session, callback) => {
  if (deps.sessionRate.admit(session.remoteAddress)) return callback();
  deps.log.warn('inbound session refused: rate per minute exceeded', { session: session.id, client: session.remoteAddress });
  callback(smtpReply(421, '4.7.0 Too many new sessions from your address, try again later'));
};
