// A platform admin sets a user's password (PUT /api/v1/admin/users/{id}/password):
// the way to give an account its first password on an installation whose mail
// does not reach the user yet, and to let someone back in without the reset
// mail. The console's password rule applies as everywhere; the lockout count is
// cleared and every pending reset link spent (a link requested earlier must not
// undo what the operator set). Replacing an existing password signs out every
// session of the account, as a reset does: whoever held it may have been
// signed in with it. A first password leaves sessions (passkey, single sign-on)
// alone. Two-factor stays as it was, and the address is not counted as
// verified: the operator did not prove the mailbox.
import { sql } from 'drizzle-orm';
import { passwordResets, sessions, users } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { invalid, notFound } from '../errors.js';
import { hashPassword } from '../console/password.js';
import { passwordProblem } from '../console/password-policy.js';
import { presentUser, userColumns } from './present.js';

export interface PasswordSet {
  user: ReturnType<typeof presentUser>;
  /** The account had a password, now replaced; its sessions were signed out. */
  replaced: boolean;
}

export async function setUserPassword(db: Db, userId: string, password: string): Promise<PasswordSet> {
  const [user] = await db.select(userColumns).from(users).where(sql`${users.id} = ${userId}`);
  if (!user) throw notFound('user not found');
  const problem = passwordProblem(password, user.email);
  if (problem) throw invalid(`password: ${problem}`, { password: problem });
  const passwordHash = hashPassword(password);

  // One statement: whether a password was there (the row locked, so two
  // concurrent sets agree on it), the new hash, the links spent, the sessions ended.
  const { rows: [done] } = await db.execute<{ replaced: boolean }>(sql`
    with target as (
      select id, password_hash is not null as had from ${users} where id = ${userId} for update
    ),
    spent as (
      update ${passwordResets} set used_at = now()
      where user_id in (select id from target) and used_at is null
    ),
    changed as (
      update ${users} set password_hash = ${passwordHash}, failed_password_count = 0, password_locked_until = null,
        sessions_valid_after = case when (select had from target) then now() else sessions_valid_after end
      where id in (select id from target)
      returning id
    ),
    ended as (
      delete from ${sessions} where user_id in (select id from target where had) and created_at <= now()
    )
    select (select had from target) as replaced from changed`);
  // Deleted between the read and the change.
  if (!done) throw notFound('user not found');
  return { user: presentUser(user), replaced: done.replaced };
}
