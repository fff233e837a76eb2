// The spam check beside the verifier: the listener's verdict function, wrapped
// so that each message also streams to rspamd, in parallel with the spool write
// and the DKIM checks (one pass over the bytes), and its verdicts carry `spam`.
// rspamd failing never costs a message: it is kept unscored, counted, and the
// outage logged once (docs/inbound.md, Spam scoring).
import type { PassThrough } from 'node:stream';
import type { InboundSpam } from '@edgemail/shared';
import type { Log } from '../../log.js';
import { fanOut } from '../listener/fan-out.js';
import { recipientDomain } from '../listener/on-rcpt-to.js';
import type { AuthenticateMessage } from '../mail-auth/verdicts.js';
import { SpamCheckError, type CheckSpam, type SpamFailureReason } from './rspamd-client.js';

export interface SpamCheckOptions {
  /** Asks rspamd (`createRspamdClient`). */
  check: CheckSpam;
  /**
   * The score at or above which the project of `domain` (an A-label, lower case)
   * refuses mail at DATA; null when it set none. From the domain list.
   */
  rejectScore: (domain: string) => number | null;
  /** Told of each check that gave no verdict (the failure metric). */
  onFailure?: (reason: SpamFailureReason) => void;
  /** Told of each verdict (the checks metric). */
  onScored?: (spam: InboundSpam) => void;
  log: Log;
  /** For the log lines: where rspamd is. */
  url: string;
}

/**
 * `authenticate` with rspamd's verdict added. A message is refused
 * (`spamReject`) only when its score reaches the reject threshold of every
 * recipient's project: one reply answers them all, and a project that did not
 * ask to refuse must not lose its mail to another's threshold.
 *
 * @example
 * const authenticate = withSpamCheck(createAuthenticator(...), { check: createRspamdClient(...), rejectScore: (d) => domains.spamRejectScore(d), log, url });
 */
export function withSpamCheck(authenticate: AuthenticateMessage, options: SpamCheckOptions): AuthenticateMessage {
  let down = false;
  const failed = (err: unknown): null => {
    const reason = err instanceof SpamCheckError ? err.reason : 'error';
    options.onFailure?.(reason);
    if (!down) {
      // Once per outage, not per message: a dead rspamd under load would flood the log.
      down = true;
      options.log.warn('rspamd gives no verdicts; inbound mail is stored unscored until it answers again', { url: options.url, reason, error: err instanceof Error ? err.message : String(err) });
    }
    return null;
  };
  const scored = (spam: InboundSpam): InboundSpam => {
    options.onScored?.(spam);
    if (down) {
      down = false;
      options.log.info('rspamd answers again; inbound mail is scored', { url: options.url });
    }
    return spam;
  };

  return async (message, context) => {
    const [toVerify, toScore] = fanOut(message, 2) as [PassThrough, PassThrough];
    const rcpt = context.rcptTo ?? [];
    const spamming = options.check(toScore, { ip: context.ip, helo: context.helo, from: context.sender, rcpt, queueId: context.queueId ?? '' })
      .then(scored, failed)
      // Done (or given up): the branch stops holding the verifier back.
      .finally(() => toScore.destroy());
    const [verdicts, spam] = await Promise.all([authenticate(toVerify, context).finally(() => toVerify.destroy()), spamming]);
    return { ...verdicts, spam, spamReject: spam !== null && refusedByEveryProject(spam.score, rcpt, options.rejectScore) };
  };
}

/** Whether `score` reaches the reject threshold of the project of every recipient. */
export function refusedByEveryProject(score: number, rcptTo: string[], rejectScore: (domain: string) => number | null): boolean {
  const domains = new Set(rcptTo.map((address) => recipientDomain(address)));
  if (!domains.size) return false;
  for (const domain of domains) {
    const threshold = domain ? rejectScore(domain) : null;
    if (threshold === null || score < threshold) return false;
  }
  return true;
}
