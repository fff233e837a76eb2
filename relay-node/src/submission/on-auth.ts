// onAuth: `AUTH PLAIN` and `AUTH LOGIN`, the password being a project API key
// (docs/submission.md). The username is not read: any value is accepted (the
// project id or `apikey` are good habits), since the key names its project.
import type { SMTPServerOptions } from 'smtp-server';
import { smtpReply } from '../smtp/index.js';
import { EdgeRefusedError } from '../edge/errors.js';
import type { SubmissionDeps, SubmissionUser } from './types.js';

/** How long AUTH waits for the edge's verdict before answering `454 4.7.0` (try again). */
const AUTH_TIMEOUT_MS = 15_000;
/** The relay route's bound on a presented token (shared/src/relay-protocol/submission.ts). */
const MAX_TOKEN_CHARS = 200;

/**
 * Replies: success `235 2.7.0`; a key the edge refuses `535 5.7.8 <why>`,
 * counted against the client's address, and past `max_auth_failures` in the
 * window `421 4.7.0` with the session closed (so is an empty password, one
 * longer than any key, or one the edge's relay route refuses as malformed);
 * any 4xx of the edge to the check but 408/429 (its relay route refusing the
 * request, a front before it refusing it) is a refused credential too: `535`,
 * never "try again", or a client like Postfix retries forever; the edge
 * unreachable, 5xx, 408 or 429 is `454 4.7.0` (RFC 4954: temporary), not counted.
 * A response that is not base64 never gets here: `501 5.5.2`
 * (submission-connection.ts).
 */
export const onAuth = (deps: SubmissionDeps): NonNullable<SMTPServerOptions['onAuth']> => (auth, session, callback) => {
  const client = session.remoteAddress;
  if (deps.authFailures.blocked(client)) return callback(smtpReply(421, '4.7.0 Too many failed AUTH attempts from your address, try again later'));
  const token = auth.password ?? '';
  // No key is empty or that long (the relay route refuses both): a wrong password, not the edge's failure.
  if (!token || token.length > MAX_TOKEN_CHARS) return refuse(deps, auth.method, session.id, client, 'invalid', 'no API key given', callback);
  // A lease on this key from this address is the edge's verdict of at most `submission.lease_ttl` ago
  // (docs/submission.md, "Answered at the node"): no round trip for a client that connects per message.
  const leased = deps.fast?.leases.current(token, client);
  if (leased) {
    const user: SubmissionUser = { projectId: leased.projectId, sandbox: leased.sandbox, token };
    return callback(null, { user });
  }
  deps.checkKey({ token, client_address: client }, AbortSignal.timeout(AUTH_TIMEOUT_MS)).then(
    (answer) => {
      if (answer.ok) {
        const user: SubmissionUser = { projectId: answer.project_id, sandbox: answer.sandbox, token };
        deps.log.debug?.('submission AUTH accepted', { session: session.id, client, project: answer.project_id, sandbox: answer.sandbox });
        return callback(null, { user });
      }
      refuse(deps, auth.method, session.id, client, answer.reason, answer.message, callback);
    },
    (err: Error) => {
      // The edge refused the request itself (a password its contract does not take; the client
      // typed 408 and 429 as unavailable/rate-limited, not as this): a wrong password.
      if (err instanceof EdgeRefusedError) return refuse(deps, auth.method, session.id, client, 'invalid', 'not an API key', callback);
      deps.log.warn('submission AUTH not checked: the edge did not answer', { session: session.id, client, error: err.message });
      callback(smtpReply(454, '4.7.0 Temporary authentication failure, try again later'));
    },
  );
};

type AuthCallback = Parameters<NonNullable<SMTPServerOptions['onAuth']>>[2];

/** `535 5.7.8` naming why, counted against the address; past `max_auth_failures`, `421 4.7.0` and closed. */
function refuse(deps: SubmissionDeps, method: string, session: string, client: string, reason: string, message: string, callback: AuthCallback): void {
  const over = deps.authFailures.fail(client);
  deps.log.info('submission AUTH refused', { session, client, method, reason, closed: over });
  if (over) return callback(smtpReply(421, '4.7.0 Too many failed AUTH attempts from your address, closing; try again later'));
  callback(smtpReply(535, `5.7.8 Authentication credentials invalid: ${message}`));
}
