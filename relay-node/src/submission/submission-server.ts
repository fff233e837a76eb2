// The submission listener (docs/submission.md): mail from an application that
// authenticates with a project API key, handed to the edge as a send. Built
// on the SMTP layer the inbound listener uses too (smtp/): the session caps and
// bounds, the per-IP session rate (`421 4.7.0`), the size caps; the PROXY front
// and the TLS chain are the node's, as for inbound.
import type { SMTPServerOptions } from 'smtp-server';
import { SUBMISSION_MAX_RECIPIENTS } from '@edgemail/shared';
import {
  createSessionRate, logListenerError, logRefusals, onConnect as rateOnConnect, onMailFrom, sessionBounds, smtpReply,
  type SessionError, type SmtpListenerOptions,
} from '../smtp/index.js';
import { onAuth } from './on-auth.js';
import { onData } from './on-data.js';
import { onRcptTo } from './on-rcpt-to.js';
import { SubmissionSmtpServer } from './submission-connection.js';
import type { SubmissionDeps } from './types.js';

const MAX_COMMAND_LENGTH = 2048;

/** The listeners' options (smtp/listener-options.ts), read from the `submission.*` settings and `inbound.max_message_size`/`max_header_size`. */
export type SubmissionServerOptions = SmtpListenerOptions;

/**
 * Builds the submission listener (not yet listening). AUTH PLAIN and LOGIN
 * required before MAIL FROM (`530 5.7.0`), over TLS unless the client is on
 * loopback (`538 5.7.11`); at most 50 RCPT (`452 4.5.3`); then the message goes
 * to the spool and the edge, and the edge's verdict is the reply.
 *
 * @example
 * const server = createSubmissionServer(deps, { ...submissionOptionsFromConfig(config), name, tls });
 * server.listen(2587, '127.0.0.1');
 */
export function createSubmissionServer(deps: SubmissionDeps, options: SubmissionServerOptions): SubmissionSmtpServer {
  if (options.secure && !options.tls) throw new Error('submission listener: implicit TLS (secure) needs a certificate (tls)');
  const { secureContext, ...tls } = options.tls ?? {};
  const sessionRate = rateOnConnect({ sessionRate: createSessionRate(options.ratePerMinute), log: deps.log });
  const smtpOptions: SMTPServerOptions = {
    ...tls,
    name: options.name,
    secure: !!options.secure,
    needsUpgrade: !!options.secure,
    disabledCommands: options.tls ? [] : ['STARTTLS'],
    authMethods: ['PLAIN', 'LOGIN'],
    authOptional: false,
    disableReverseLookup: true,
    hideENHANCEDSTATUSCODES: false,
    size: options.maxMessageSize,
    maxCommandLength: MAX_COMMAND_LENGTH,
    socketTimeout: options.idleTimeoutMs,
    closeTimeout: options.closeTimeoutMs,
    logger: false,
    // A shut-out address (too many failed AUTH) is refused at once, then the session rate is counted.
    onConnect: (session, callback) => {
      if (deps.authFailures.blocked(session.remoteAddress)) return callback(smtpReply(421, '4.7.0 Too many failed AUTH attempts from your address, try again later'));
      sessionRate(session, callback);
    },
    onAuth: onAuth(deps),
    onMailFrom: logRefusals(deps.log, 'submission sender refused', 'from', onMailFrom({ maxMessageSize: options.maxMessageSize, maxMessagesPerSession: options.maxMessagesPerSession ?? 0, admission: deps.admission })),
    onRcptTo: logRefusals(deps.log, 'submission recipient refused', 'to', onRcptTo(SUBMISSION_MAX_RECIPIENTS)),
    onData: onData({ ...deps, limits: { maxMessageSize: options.maxMessageSize, maxHeaderSize: options.maxHeaderSize } }),
  };
  const server = new SubmissionSmtpServer(smtpOptions, sessionBounds(options));
  if (secureContext) server.secureContext.set('*', secureContext);
  const listener = options.secure ? 'submission (implicit TLS)' : 'submission';
  server.on('error', (err: SessionError) => logListenerError(deps.log, listener, err));
  return server;
}
