// How old a signed SNS notification may be (docs/ses.md, "Replays"). The
// signature proves SNS sent the message once, not that it is being sent now:
// anyone who saw a notification (a log, a proxy, a misdirected subscription)
// could post it again. The once-only reference stops a replay of one already
// applied; this window stops one that never reached us, or one replayed after
// its bounce record was deleted. SNS signs `Timestamp`, so it cannot be moved.
import type { Config } from '@edgemail/shared';
import { invalid } from '../errors.js';

/** A sender's clock ahead of ours by more than this is not a clock error. */
export const MAX_FUTURE_SKEW_MS = 5 * 60_000;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const words = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`);

/** Throws 400 naming the rule when `timestamp` is unreadable, older than `ses.max_notification_age` or too far ahead. */
export function assertFresh(timestamp: string, config: Pick<Config, 'ses.max_notification_age'>, now = Date.now()): void {
  const at = ISO_8601.test(timestamp) ? Date.parse(timestamp) : NaN;
  if (Number.isNaN(at)) throw invalid('Timestamp must be an ISO 8601 time', { Timestamp: 'must be an ISO 8601 time' });
  const maxAge = config['ses.max_notification_age'];
  if (now - at > maxAge) {
    throw invalid(`notification refused as a replay: its Timestamp ${timestamp} is more than ${words(maxAge)} old (ses.max_notification_age)`);
  }
  if (at - now > MAX_FUTURE_SKEW_MS) {
    throw invalid(`notification refused: its Timestamp ${timestamp} is more than ${words(MAX_FUTURE_SKEW_MS)} in the future`);
  }
}
