// Registering a passkey for the signed-in user (docs/console.md "Passkeys"):
// options with a fresh challenge, then the authenticator's answer verified by
// @simplewebauthn/server (challenge, origin, rpID, user presence and
// verification, the attested public key) before the credential is stored.
import { eq, sql } from 'drizzle-orm';
import { generateRegistrationOptions, verifyRegistrationResponse, type RegistrationResponseJSON } from '@simplewebauthn/server';
import { decodeClientDataJSON, isoBase64URL } from '@simplewebauthn/server/helpers';
import { passkeys, users } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../../db/client.js';
import { isUniqueViolation } from '../../../db/errors.js';
import { userLock } from '../../../db/project-lock.js';
import { conflict, invalid, notFound } from '../../errors.js';
import { CHALLENGE_TTL_MS, consumeChallenge, issueChallenge } from './challenges.js';
import { relyingParty } from './relying-party.js';
import { presentPasskey, type Passkey } from './manage.js';

/** ES256, EdDSA and RS256: what authenticators make, all verified with WebCrypto. */
export const SUPPORTED_ALGORITHMS = [-7, -8, -257];

/** Passkeys one user may have: enough for every device and a spare, few enough to list. */
export const MAX_PASSKEYS_PER_USER = 20;

const tooMany = () => conflict(`a user can have at most ${MAX_PASSKEYS_PER_USER} passkeys: delete one first`);

/** The WebAuthn user handle: the user's id, so a discoverable passkey names its account. */
export const userHandleOf = (userId: string) => new Uint8Array(new TextEncoder().encode(userId));

export async function registrationOptions(db: Db, config: Config, userId: string) {
  const { rpID, rpName } = relyingParty(config);
  const [user] = await db.select({ id: users.id, email: users.email, name: users.name }).from(users).where(eq(users.id, userId));
  if (!user) throw notFound('user not found');
  const existing = await db.select({ id: passkeys.credentialId, transports: passkeys.transports }).from(passkeys).where(eq(passkeys.userId, user.id));
  if (existing.length >= MAX_PASSKEYS_PER_USER) throw tooMany();
  return generateRegistrationOptions({
    rpName, rpID,
    userName: user.email,
    userID: userHandleOf(user.id),
    userDisplayName: user.name || user.email,
    challenge: await issueChallenge(db, 'webauthn.registration', user.id),
    timeout: CHALLENGE_TTL_MS,
    attestationType: 'none',
    excludeCredentials: existing,
    // A passkey signs in alone: it must be discoverable and verify the user (PIN or biometrics).
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
  });
}

function challengeOf(clientDataJSON: string): string {
  try {
    return decodeClientDataJSON(clientDataJSON).challenge;
  } catch {
    throw invalid('response.response.clientDataJSON is not WebAuthn client data', { 'response.response.clientDataJSON': 'not WebAuthn client data' });
  }
}

/** Verifies the answer to `registrationOptions` and stores the passkey; 400 naming what is wrong, nothing stored. */
export async function registerPasskey(db: Db, config: Config, userId: string, name: string, response: RegistrationResponseJSON): Promise<Passkey> {
  const challenge = challengeOf(response.response.clientDataJSON);
  if (!(await consumeChallenge(db, 'webauthn.registration', challenge, userId))) {
    throw invalid('unknown, expired or already used challenge: ask for new registration options', { response: 'unknown, expired or already used challenge' });
  }
  const { rpID, origins } = relyingParty(config);
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response, expectedChallenge: challenge, expectedOrigin: origins, expectedRPID: rpID,
      requireUserVerification: true, supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
    });
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw invalid(`passkey registration refused: ${reason}`, { response: reason });
  }
  if (!verified.verified) throw invalid('passkey registration refused: the attestation does not verify', { response: 'the attestation does not verify' });
  const info = verified.registrationInfo;
  let inserted;
  try {
    [, inserted] = await db.batch([
      db.execute(userLock('passkeys', userId)),
      // Counted after the lock (READ COMMITTED: a new snapshot per statement), so two racing answers cannot both take the last place.
      db.execute<{ id: string }>(sql`
        insert into ${passkeys} (user_id, name, credential_id, public_key, counter, transports, aaguid, backed_up)
        select ${userId}, ${name}, ${info.credential.id}, ${isoBase64URL.fromBuffer(info.credential.publicKey)}, ${info.credential.counter},
          array(select jsonb_array_elements_text(${JSON.stringify(response.response.transports ?? [])}::jsonb)), ${info.aaguid}, ${info.credentialBackedUp}
        where (select count(*) from ${passkeys} where user_id = ${userId}) < ${MAX_PASSKEYS_PER_USER}
        returning id`),
    ]);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict('this passkey is registered already');
    throw e;
  }
  const id = inserted.rows[0]?.id;
  if (!id) throw tooMany();
  const [row] = await db.select().from(passkeys).where(eq(passkeys.id, id));
  if (!row) throw notFound('passkey not found'); // deleted in between
  return presentPasskey(row);
}
