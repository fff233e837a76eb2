// Which failures say the address itself is bad, so that the project stops
// sending to it (docs/sending.md: a hard bounce adds the recipient to the
// project's suppressions with reason `hard_bounce`).
import { enhancedCode } from '@edgemail/shared';

/** The codes of a permanently bad mailbox or address (RFC 5321 4.2.2). */
const HARD_CODES = new Set([550, 551, 553]);

/**
 * A hard bounce: a failed attempt answered 550, 551 or 553 whose enhanced
 * code, when the server gave one, is 5.1.x (bad destination mailbox or
 * address). `550 5.7.1` (a policy refusal) is not one: the address may be
 * fine. A failure with no SMTP answer (no such domain, null MX) is not one
 * either: only a server's word on the mailbox counts.
 *
 * @example isHardBounce({ outcome: 'failed', smtp_code: 550, reply: '550 5.1.1 no such user' }) // true
 */
export function isHardBounce(result: { outcome: string; smtp_code: number | null; reply: string }): boolean {
  if (result.outcome !== 'failed' || result.smtp_code === null || !HARD_CODES.has(result.smtp_code)) return false;
  const enhanced = enhancedCode(result.reply);
  return enhanced === null || (enhanced.class === 5 && enhanced.subject === 1);
}
