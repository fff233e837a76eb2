// onAuth: `AUTH PLAIN` and `AUTH LOGIN`, the password being a project API key
// (docs/submission.md). The username is not read: any value is accepted (the
// project id or `apikey` are good habits), since the key names its project.
import type { SMTPServerOptions } from 'smtp-server';
import { smtpReply } from '../inbound/listener/index.js';
import type { SubmissionDeps, SubmissionUser } from './types.js';

/** How long AUTH waits for the edge's verdict before answering `454 4.7.0` (try again). */
const AUTH_TIMEOUT_MS = 15_000;

/**
 * Replies: success `235 2.7.0`; a key the edge refuses `535 5.7.8 <why>`,
 * counted against the client's address, and past `max_auth_failures` in the
 * window `421 4.7.0` with the session closed; the edge unreachable
 * `454 4.7.0` (RFC 4954: temporary), not counted.
 */
export const onAuth = (deps: SubmissionDeps): NonNullable<SMTPServerOptions['onAuth']> => (auth, session, callback) => {
  const client = session.remoteAddress;
  if (deps.authFailures.blocked(client)) return callback(smtpReply(421, '4.7.0 Too many failed AUTH attempts from your address, try again later'));
  const token = auth.password ?? '';
  deps.checkKey({ token, client_address: client }, AbortSignal.timeout(AUTH_TIMEOUT_MS)).then(
    (answer) => {
      if (answer.ok) {
        const user: SubmissionUser = { projectId: answer.project_id, sandbox: answer.sandbox, token };
        deps.log.debug?.('submission AUTH accepted', { session: session.id, client, project: answer.project_id, sandbox: answer.sandbox });
        return callback(null, { user });
      }
      const over = deps.authFailures.fail(client);
      deps.log.info('submission AUTH refused', { session: session.id, client, method: auth.method, reason: answer.reason, closed: over });
      if (over) return callback(smtpReply(421, '4.7.0 Too many failed AUTH attempts from your address, closing; try again later'));
      callback(smtpReply(535, `5.7.8 Authentication credentials invalid: ${answer.message}`));
    },
    (err: Error) => {
      deps.log.warn('submission AUTH not checked: the edge did not answer', { session: session.id, client, error: err.message });
      callback(smtpReply(454, '4.7.0 Temporary authentication failure, try again later'));
    },
  );
};
