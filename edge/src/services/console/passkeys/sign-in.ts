// Passkey sign-in (docs/console.md "Passkeys"): discoverable credentials, so
// the options name no account (and reveal none). The answer's challenge is
// spent first, then the credential is looked up by its id and the assertion
// verified by @simplewebauthn/server (origin, rpID hash, user presence and
// verification, signature, counter). Not subject to the password lockout: a
// passkey cannot be guessed, and a stranger's wrong passwords must not lock
// its owner out.
import { and, eq, sql } from 'drizzle-orm';
import { generateAuthenticationOptions, verifyAuthenticationResponse, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import { decodeClientDataJSON, isoBase64URL } from '@simplewebauthn/server/helpers';
import { passkeys, users } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../../db/client.js';
import { CHALLENGE_TTL_MS, consumeChallenge, issueChallenge } from './challenges.js';
import { relyingParty } from './relying-party.js';
import { userHandleOf } from './registration.js';

export async function authenticationOptions(db: Db, config: Config) {
  return generateAuthenticationOptions({
    rpID: relyingParty(config).rpID,
    challenge: await issueChallenge(db, 'webauthn.authentication', null),
    timeout: CHALLENGE_TTL_MS,
    userVerification: 'required',
  });
}

/** Why an answer was refused: the `auth.login.failed` event's detail is `passkey:<reason>`. */
export type PasskeyFailure =
  | 'malformed' | 'challenge' | 'unknown_credential' | 'user_handle'
  | 'origin' | 'rp_id' | 'user_verification' | 'counter' | 'signature';

export type PasskeySignInOutcome =
  | { ok: true; user: { id: string; email: string }; passkeyId: string }
  | { ok: false; reason: PasskeyFailure; user: { id: string; email: string } | null };

// The library says what failed only in its error's words.
function failureOf(message: string): PasskeyFailure {
  if (/origin/i.test(message)) return 'origin';
  if (/RP ID/i.test(message)) return 'rp_id';
  if (/counter/i.test(message)) return 'counter';
  if (/user (verification|not present)|could not be verified/i.test(message)) return 'user_verification';
  if (/challenge/i.test(message)) return 'challenge';
  return 'signature';
}

/** Judges the answer; the caller opens the session on `ok` and records the event either way. */
export async function signInWithPasskey(db: Db, config: Config, response: AuthenticationResponseJSON): Promise<PasskeySignInOutcome> {
  let challenge: string;
  try {
    challenge = decodeClientDataJSON(response.response.clientDataJSON).challenge;
  } catch {
    return { ok: false, reason: 'malformed', user: null };
  }
  if (typeof challenge !== 'string' || !(await consumeChallenge(db, 'webauthn.authentication', challenge, null))) {
    return { ok: false, reason: 'challenge', user: null };
  }
  const [passkey] = await db.select({
    id: passkeys.id, publicKey: passkeys.publicKey, counter: passkeys.counter, transports: passkeys.transports,
    userId: users.id, email: users.email,
  }).from(passkeys).innerJoin(users, eq(users.id, passkeys.userId)).where(eq(passkeys.credentialId, response.id));
  if (!passkey) return { ok: false, reason: 'unknown_credential', user: null };
  const user = { id: passkey.userId, email: passkey.email };
  const handle = response.response.userHandle;
  if (handle !== undefined && handle !== isoBase64URL.fromBuffer(userHandleOf(passkey.userId))) {
    return { ok: false, reason: 'user_handle', user };
  }
  const { rpID, origins } = relyingParty(config);
  let verified;
  try {
    verified = await verifyAuthenticationResponse({
      response, expectedChallenge: challenge, expectedOrigin: origins, expectedRPID: rpID,
      requireUserVerification: true,
      credential: {
        id: response.id, publicKey: isoBase64URL.toBuffer(passkey.publicKey),
        counter: passkey.counter, transports: passkey.transports,
      },
    });
  } catch (e) {
    return { ok: false, reason: failureOf(e instanceof Error ? e.message : String(e)), user };
  }
  if (!verified.verified) return { ok: false, reason: 'signature', user };
  // Compare-and-set on the counter: of two answers racing with one counter value, one wins.
  const [used] = await db.update(passkeys).set({
    counter: verified.authenticationInfo.newCounter, lastUsedAt: sql`now()`, backedUp: verified.authenticationInfo.credentialBackedUp,
  }).where(and(eq(passkeys.id, passkey.id), eq(passkeys.counter, passkey.counter))).returning({ id: passkeys.id });
  if (!used) return { ok: false, reason: 'counter', user };
  return { ok: true, user, passkeyId: passkey.id };
}
