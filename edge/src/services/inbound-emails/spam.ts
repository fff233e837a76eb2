// rspamd's verdict on an inbound record (docs/inbound.md, Spam scoring): the
// relay node scores the message and refuses it at DATA when every recipient's
// project asks; here each project's record gets the verdict and its mark.
import type { InboundSpam as StoredSpam } from '@edgemail/schema';
import type { InboundMeta } from '../../contracts/inbound-meta.js';

/** A project's thresholds on rspamd's score; null: that one is off. */
export interface SpamThresholds { reject: number | null; mark: number | null }

/**
 * The record's `spam`: null when the node did not score the message. `marked`
 * when the score reaches the project's mark threshold, or its reject threshold
 * (a message accepted because another recipient's project did not refuse it).
 */
export function spamOfRecord(meta: Pick<InboundMeta, 'spam'>, thresholds: SpamThresholds): StoredSpam | null {
  const { spam } = meta;
  if (!spam) return null;
  const reaches = (threshold: number | null) => threshold !== null && spam.score >= threshold;
  return { score: spam.score, required_score: spam.required_score, action: spam.action, symbols: spam.symbols, marked: reaches(thresholds.mark) || reaches(thresholds.reject) };
}

/** The `status_reason` of a record whose sender was answered 550 5.7.1 for its spam score. */
export const spamRejectedReason = (meta: Pick<InboundMeta, 'spam'>) => `spam score ${meta.spam?.score ?? 'unknown'} reached the project's reject threshold (550 5.7.1 at DATA)`;
