// Password sign-in (docs/console.md): the password, then the second factor
// when the account has one, under the lockout (lockout.ts). Every refusal of
// the password leg is the same answer: an unknown email, a wrong password and
// a locked account cannot be told apart (spec "Authentication" item 10), nor
// by time (an unknown email verifies a decoy hash).
import { and, eq, sql } from 'drizzle-orm';
import { users } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { needsRehash, hashPassword, verifyDecoy, verifyPassword } from './password.js';
import { clearFailures, recordFailure } from './lockout.js';
import { checkTotpCode } from './totp.js';
import { consumeRecoveryCode } from './recovery-codes.js';

export interface SignInInput { email: string; password: string; totp_code?: string; recovery_code?: string }

/** The leg that failed, as the `auth.login.failed` event's `detail` names it. */
export type FailedLeg = 'password' | 'locked' | 'totp' | 'totp_required' | 'recovery_code';

export type SignInOutcome =
  /** `rehash`: the stored hash is below today's cost; run it after the answer (it costs a whole hash). */
  | { ok: true; user: { id: string; email: string }; rehash?: () => Promise<unknown> }
  | { ok: false; leg: FailedLeg; user: { id: string; email: string } | null };

const userByEmail = (db: Db, email: string) => db.select({
  id: users.id, email: users.email, passwordHash: users.passwordHash,
  locked: sql<boolean>`coalesce(${users.passwordLockedUntil} > now(), false)`,
  totpOn: sql<boolean>`${users.totpEnabledAt} IS NOT NULL`, totpSecretSealed: users.totpSecretSealed,
}).from(users).where(sql`lower(${users.email}) = lower(${email})`);

/** Judges the credentials; the caller opens the session on `ok` and records the event either way. */
export async function signInWithPassword(db: Db, config: Config, input: SignInInput): Promise<SignInOutcome> {
  const [user] = await userByEmail(db, input.email);
  if (!user?.passwordHash) {
    verifyDecoy(input.password);
    return { ok: false, leg: 'password', user: user ? { id: user.id, email: user.email } : null };
  }
  const who = { id: user.id, email: user.email };
  const right = verifyPassword(input.password, user.passwordHash);
  if (user.locked) return { ok: false, leg: 'locked', user: who };
  const fail = async (leg: FailedLeg) => ({ ok: false as const, leg: (await recordFailure(db, user.id)).locked ? 'locked' as const : leg, user: who });
  if (!right) return fail('password');

  if (user.totpOn) {
    if (input.totp_code) {
      if (!(await checkTotpCode(db, config, user.id, user.totpSecretSealed, input.totp_code))) return fail('totp');
    } else if (input.recovery_code) {
      if (!(await consumeRecoveryCode(db, user.id, input.recovery_code))) return fail('recovery_code');
    } else {
      // Not a failure: the client asks for the code and repeats the call with it.
      return { ok: false, leg: 'totp_required', user: who };
    }
  }
  // Locked between our read and now (a concurrent tenth failure): the lock wins.
  if (!(await clearFailures(db, user.id))) return { ok: false, leg: 'locked', user: who };
  const stored = user.passwordHash;
  const rehash = needsRehash(stored)
    // Only if the hash is still the one verified (a password reset in between wins).
    ? () => db.update(users).set({ passwordHash: hashPassword(input.password) }).where(and(eq(users.id, user.id), eq(users.passwordHash, stored)))
    : undefined;
  return { ok: true, user: who, rehash };
}
