// WebAuthn challenges (docs/console.md "Passkeys"): random, single use and
// short lived. Only hex(sha256(challenge)) is stored (`auth_challenges`), so
// the table cannot answer a ceremony; the challenge comes back inside the
// browser's signed clientDataJSON and is consumed by one DELETE ... RETURNING,
// so two answers carrying it cannot both pass.
import { sql } from 'drizzle-orm';
import { base64url, sha256Hex } from '@edgemail/shared';
import type { Db } from '../../../db/client.js';

/** How long a ceremony may take, from the options to the answer. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

export type ChallengePurpose = 'webauthn.registration' | 'webauthn.authentication';

/**
 * A fresh challenge stored for `purpose` (and the user it is for, when the
 * ceremony is a signed-in user's). Expired webauthn challenges nobody answered
 * are swept by the same statement.
 */
export async function issueChallenge(db: Db, purpose: ChallengePurpose, userId: string | null): Promise<Uint8Array<ArrayBuffer>> {
  // The options carry the bytes base64url-encoded; clientDataJSON brings that text back.
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const challenge = base64url(bytes);
  await db.execute(sql`
    with swept as (
      delete from auth_challenges where purpose like 'webauthn.%' and expires_at < now()
    )
    insert into auth_challenges (key_hash, purpose, user_id, expires_at)
    values (${await sha256Hex(challenge)}, ${purpose}, ${userId}, now() + make_interval(secs => ${CHALLENGE_TTL_MS / 1000}))`);
  return bytes;
}

/**
 * Spends the challenge: true only when it was issued for this purpose (and
 * user), is unexpired and not spent before. Spent whatever happens next, so a
 * failed answer cannot be retried with the same challenge.
 */
export async function consumeChallenge(db: Db, purpose: ChallengePurpose, challenge: string, userId: string | null): Promise<boolean> {
  const { rows } = await db.execute<{ live: boolean }>(sql`
    delete from auth_challenges
    where key_hash = ${await sha256Hex(challenge)} and purpose = ${purpose} and user_id is not distinct from ${userId}::uuid
    returning expires_at > now() as live`);
  return rows[0]?.live === true;
}
