// Redeeming a password reset link: the new password, the lockout count
// cleared, every session of the account signed out (sessions_valid_after),
// every other pending link of the account spent, and the address counted as
// verified (the link proved the mailbox). A bad token changes nothing.
import { sql } from 'drizzle-orm';
import { passwordResets, users } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { invalid } from '../errors.js';
import { hashPassword } from '../console/password.js';
import { passwordProblem } from '../console/password-policy.js';
import { mailedTokenHash } from '../invitations/token.js';
import type { PasswordResetCompleteInput } from '../../contracts/member.js';

export const INVALID_RESET = 'invalid, expired or already used password reset token';

/** The account whose password was set. */
export async function completePasswordReset(db: Db, input: PasswordResetCompleteInput): Promise<{ userId: string; email: string }> {
  const hash = await mailedTokenHash(input.token);
  const { rows: [found] } = await db.execute<{ id: string; email: string }>(sql`
    select r.id, u.email from ${passwordResets} r join ${users} u on u.id = r.user_id
    where r.token_hash = ${hash} and r.used_at is null and r.expires_at > now()`);
  if (!found) throw invalid(INVALID_RESET, { token: 'invalid, expired or already used' });
  const problem = passwordProblem(input.password, found.email);
  if (problem) throw invalid(`password: ${problem}`, { password: problem });
  const passwordHash = hashPassword(input.password);

  const { rows: [changed] } = await db.execute<{ id: string; email: string }>(sql`
    with spent as (
      update ${passwordResets} set used_at = now()
      where id = ${found.id} and used_at is null and expires_at > now()
      returning user_id
    ),
    others as (
      update ${passwordResets} set used_at = now()
      where user_id in (select user_id from spent) and used_at is null and id <> ${found.id}
    )
    update ${users} set password_hash = ${passwordHash}, failed_password_count = 0, password_locked_until = null,
      sessions_valid_after = now(), email_verified_at = coalesce(email_verified_at, now())
    where id in (select user_id from spent)
    returning id, email`);
  // Spent by a concurrent request between the read and the change.
  if (!changed) throw invalid(INVALID_RESET, { token: 'invalid, expired or already used' });
  return { userId: changed.id, email: changed.email };
}
