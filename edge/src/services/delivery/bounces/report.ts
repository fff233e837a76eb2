// One bounce or complaint, as each source (the delivery's own 5xx, a DSN or
// ARF report at the VERP return path, an SES notification, a simulator
// address) hands it to `recordBounces` once it knows which email it is about.

export type BounceType = 'hard' | 'soft' | 'complaint';
export type BounceSource = 'smtp' | 'dsn' | 'arf' | 'ses' | 'simulator';

export interface BounceReport {
  /** The `emails` row (one recipient of one message) it is about. */
  emailId: string;
  type: BounceType;
  source: BounceSource;
  /** What identifies the report at its source (spool id, SNS MessageId): recording it twice is one row. */
  sourceRef: string | null;
  smtpCode: number | null;
  /** Enhanced status code, `5.1.1`. */
  status: string | null;
  diagnostic: string | null;
  remoteMta: string | null;
  /** ARF `Feedback-Type` of a complaint (`abuse`, …). */
  feedbackType: string | null;
  /** The original message's Message-ID as the report quoted it. */
  originalMessageId: string | null;
}
