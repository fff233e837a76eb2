// Two-factor recovery codes: ten per user, shown once, stored as
// hex(sha256) (50 random bits each: a slow hash adds nothing), single use.
import { and, eq, isNull } from 'drizzle-orm';
import { recoveryCodes } from '@edgemail/schema';
import { sha256Hex } from '@edgemail/shared';
import type { Db } from '../../db/client.js';

export const RECOVERY_CODE_COUNT = 10;
// Lower-case letters and digits without the ones read alike (0/o, 1/l/i).
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

function newCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(10));
  const chars = Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/** The form a code is hashed in: what a user types, spaces, dashes and case aside. */
const normalized = (code: string) => code.toLowerCase().replace(/[\s-]/g, '');

/** The user's new codes (the old ones are void), to show once; run inside the caller's transaction. */
export function recoveryCodeRows(userId: string): { codes: string[]; rows: Promise<{ userId: string; codeHash: string }[]> } {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newCode);
  return { codes, rows: Promise.all(codes.map(async (c) => ({ userId, codeHash: await sha256Hex(normalized(c)) }))) };
}

/** Uses up one code; false when it is not one of the user's unused codes. One statement: a code works once, even raced. */
export async function consumeRecoveryCode(db: Db, userId: string, code: string): Promise<boolean> {
  const used = await db.update(recoveryCodes).set({ usedAt: new Date() })
    .where(and(eq(recoveryCodes.userId, userId), eq(recoveryCodes.codeHash, await sha256Hex(normalized(code))), isNull(recoveryCodes.usedAt)))
    .returning({ id: recoveryCodes.id });
  return used.length === 1;
}
