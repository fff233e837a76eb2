// TOTP two-factor (RFC 6238 with the `otpauth` library: SHA-1, 6 digits, 30 s,
// the parameters every authenticator app reads). The secret is sealed in
// users.totp_secret_sealed; a code is accepted within ±1 step of now and at
// most once: users.totp_last_step moves forward in the same statement that
// accepts it, so a code replayed (or raced) inside its window is refused.
import { and, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import * as OTPAuth from 'otpauth';
import { recoveryCodes, users } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { seal, unseal } from '../../crypto/seal.js';
import { conflict, forbidden, invalid } from '../errors.js';
import { verifyPassword } from './password.js';
import { clearFailures, LOCKOUT_MINUTES, recordFailure } from './lockout.js';
import { recoveryCodeRows } from './recovery-codes.js';

const PERIOD = 30;
const SEAL_CONTEXT = 'users.totp_secret_sealed';
const ISSUER = 'edgemail';

const keyOf = (config: Config) => config['database.crypto.encryption_key'];

function totp(secret: string, label: string): OTPAuth.TOTP {
  return new OTPAuth.TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: 6, period: PERIOD, secret: OTPAuth.Secret.fromBase32(secret) });
}

/** The time step a code matches (±1 of now), or null. */
function matchingStep(secret: string, code: string, now = Date.now()): number | null {
  const delta = totp(secret, '').validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD) + delta;
}

/** Records the step as used; false when it (or a later one) was used already. */
async function takeStep(db: Db, userId: string, step: number): Promise<boolean> {
  const taken = await db.update(users).set({ totpLastStep: step })
    .where(and(eq(users.id, userId), sql`(${users.totpLastStep} IS NULL OR ${users.totpLastStep} < ${step})`))
    .returning({ id: users.id });
  return taken.length === 1;
}

/**
 * Starts turning two-factor on: a new secret, sealed, not yet in force (a
 * code from it must confirm it). Starting again replaces an unconfirmed one.
 */
export async function startTotp(db: Db, config: Config, user: { id: string; email: string }) {
  const secret = new OTPAuth.Secret({ size: 20 }).base32;
  const updated = await db.update(users)
    .set({ totpSecretSealed: await seal(secret, keyOf(config), SEAL_CONTEXT), totpLastStep: null })
    .where(and(eq(users.id, user.id), isNull(users.totpEnabledAt)))
    .returning({ id: users.id });
  if (!updated.length) throw conflict('two-factor authentication is already on: turn it off first');
  return { secret, otpauth_uri: totp(secret, user.email).toString() };
}

/** Checks a code of the user's secret and uses it up; false when wrong, replayed or no secret. */
export async function checkTotpCode(db: Db, config: Config, userId: string, sealedSecret: string | null, code: string): Promise<boolean> {
  if (!sealedSecret) return false;
  const step = matchingStep(await unseal(sealedSecret, keyOf(config), SEAL_CONTEXT), code);
  return step !== null && takeStep(db, userId, step);
}

/** Confirms the started secret with a code: two-factor is on, and the ten recovery codes (shown once) replace any earlier ones. */
export async function confirmTotp(db: Db, config: Config, userId: string, code: string): Promise<string[]> {
  const [user] = await db.select({ sealed: users.totpSecretSealed, enabledAt: users.totpEnabledAt }).from(users).where(eq(users.id, userId));
  if (user?.enabledAt) throw conflict('two-factor authentication is already on');
  if (!user?.sealed) throw conflict('no two-factor setup started: POST /app/api/account/totp first');
  if (!(await checkTotpCode(db, config, userId, user.sealed, code))) throw invalid('wrong or already used code', { code: 'does not match the authenticator app' });
  const { codes, rows } = recoveryCodeRows(userId);
  const [enabled] = await db.batch([
    db.update(users).set({ totpEnabledAt: sql`now()` })
      .where(and(eq(users.id, userId), isNull(users.totpEnabledAt), isNotNull(users.totpSecretSealed)))
      .returning({ id: users.id }),
    db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)),
    db.insert(recoveryCodes).values(await rows),
  ]);
  if (!enabled.length) throw conflict('two-factor authentication is already on');
  return codes;
}

/** The refusal while the account's password lockout holds (lockout.ts). */
export const TOTP_OFF_LOCKED = `too many wrong passwords or codes: this account is locked for up to ${LOCKOUT_MINUTES} minutes, try again later`;

/**
 * Turns two-factor off, proven by the account password or a current code;
 * the secret, its last step and the recovery codes go. Each wrong password or
 * code counts toward the sign-in lockout (lockout.ts), and a locked account is
 * refused before either is looked at: a stolen session must not become an
 * unlimited password oracle, nor a way round the lock on six digits.
 */
export async function disableTotp(db: Db, config: Config, userId: string, proof: { password?: string; code?: string }): Promise<void> {
  const [user] = await db.select({
    hash: users.passwordHash, sealed: users.totpSecretSealed, enabledAt: users.totpEnabledAt,
    locked: sql<boolean>`coalesce(${users.passwordLockedUntil} > now(), false)`,
  }).from(users).where(eq(users.id, userId));
  if (!user?.enabledAt) throw conflict('two-factor authentication is not on');
  if (user.locked) throw forbidden(TOTP_OFF_LOCKED);
  const byPassword = proof.password !== undefined;
  const proven = byPassword
    ? Boolean(user.hash) && verifyPassword(proof.password!, user.hash!)
    : await checkTotpCode(db, config, userId, user.sealed, proof.code!);
  if (!proven) {
    await recordFailure(db, userId);
    throw forbidden(byPassword ? 'wrong password' : 'wrong or already used code');
  }
  // A right password clears the count, as a complete sign-in does; a code alone does not (it proves
  // the second factor, not the password). Either is refused if a concurrent failure locked meanwhile.
  const live = byPassword ? await clearFailures(db, userId) : !(await lockedNow(db, userId));
  if (!live) throw forbidden(TOTP_OFF_LOCKED);
  await db.batch([
    db.update(users).set({ totpSecretSealed: null, totpEnabledAt: null, totpLastStep: null }).where(eq(users.id, userId)),
    db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)),
  ]);
}

const lockedNow = async (db: Db, userId: string) =>
  (await db.select({ locked: sql<boolean>`coalesce(${users.passwordLockedUntil} > now(), false)` }).from(users).where(eq(users.id, userId)))[0]?.locked ?? false;
