// The password sign-in lockout: ten consecutive wrong passwords lock password
// sign-in for fifteen minutes, from any address (spec "Other constants").
// Exact across the deployment because the user's row is the counter: each
// attempt is one UPDATE, and Postgres serializes updates of a row (a
// concurrent one waits, then re-reads the row it changes), so the tenth wrong
// password of any number at once is the one that locks.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';

export const LOCKOUT_THRESHOLD = 10;
export const LOCKOUT_MINUTES = 15;

// An expired lock is forgotten by the next attempt: the count starts again.
const lockedNow = sql`(password_locked_until IS NOT NULL AND password_locked_until > now())`;
const countBefore = sql`(CASE WHEN password_locked_until IS NULL THEN failed_password_count ELSE 0 END)`;

/**
 * Counts a failed sign-in (a wrong password, or a wrong second factor after a
 * right one). `locked`: the account was locked already and nothing was
 * counted; `lockedNow`: this failure was the one that locked it.
 */
export async function recordFailure(db: Db, userId: string): Promise<{ locked: boolean; lockedNow: boolean }> {
  const { rows } = await db.execute<{ count: number; locked_until: Date | null }>(sql`
    UPDATE users SET
      failed_password_count = ${countBefore} + 1,
      password_locked_until = CASE WHEN ${countBefore} + 1 >= ${LOCKOUT_THRESHOLD}
        THEN now() + make_interval(mins => ${LOCKOUT_MINUTES}) ELSE NULL END
    WHERE id = ${userId} AND NOT ${lockedNow}
    RETURNING failed_password_count AS count, password_locked_until AS locked_until`);
  const row = rows[0];
  if (!row) return { locked: true, lockedNow: false };
  return { locked: false, lockedNow: row.locked_until !== null };
}

/** Clears the count after a complete sign-in; false (nothing cleared) when the account is locked. */
export async function clearFailures(db: Db, userId: string): Promise<boolean> {
  const { rows } = await db.execute(sql`
    UPDATE users SET failed_password_count = 0, password_locked_until = NULL
    WHERE id = ${userId} AND NOT ${lockedNow}
    RETURNING id`);
  return rows.length === 1;
}
