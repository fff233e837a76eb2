// The state of a sign-in between the redirect to the provider and its way
// back (docs/sso.md "The sign-in"): the PKCE code_verifier, the nonce, the
// provider and the return path, kept in `auth_challenges` under
// hex(sha256(state)) for ten minutes and spent by one DELETE ... RETURNING,
// so a callback URL works once. The browser that started it holds a random
// binding value in a cookie; its hash is stored too, so a callback URL sent
// to another browser (login CSRF) finds no match. A link started from a
// signed-in session (`POST /app/api/account/identities`) also keeps that
// session and its user: the callback then links the identity to them alone.
import { sql } from 'drizzle-orm';
import { sha256Hex } from '@edgemail/shared';
import type { Db } from '../../db/client.js';

/** How long the user may take at the provider. */
export const PENDING_TTL_MS = 10 * 60_000;

export interface PendingSignIn {
  providerId: string;
  nonce: string;
  codeVerifier: string;
  returnTo: string;
  /** Set when the account's own session started it: link the identity to this user, open no session. */
  link?: { userId: string; sessionId: string };
}

interface Stored extends PendingSignIn { bindingHash: string }

export async function storePendingSignIn(db: Db, state: string, binding: string, pending: PendingSignIn): Promise<void> {
  const data: Stored = { ...pending, bindingHash: await sha256Hex(binding) };
  await db.execute(sql`
    with swept as (
      delete from auth_challenges where purpose = 'oidc' and expires_at < now()
    )
    insert into auth_challenges (key_hash, purpose, data, expires_at)
    values (${await sha256Hex(state)}, 'oidc', ${JSON.stringify(data)}, now() + make_interval(secs => ${PENDING_TTL_MS / 1000}))`);
}

/**
 * Spends the pending sign-in of `state`: null when there is none, it expired,
 * or the browser's binding value does not match. Spent whatever the answer,
 * so a failed callback cannot be tried again with the same state.
 */
export async function takePendingSignIn(db: Db, state: string, binding: string | undefined): Promise<PendingSignIn | null> {
  const { rows } = await db.execute<{ data: string; live: boolean }>(sql`
    delete from auth_challenges where key_hash = ${await sha256Hex(state)} and purpose = 'oidc'
    returning data, expires_at > now() as live`);
  const row = rows[0];
  if (!row?.live || !binding) return null;
  const stored = JSON.parse(row.data) as Stored;
  if (stored.bindingHash !== await sha256Hex(binding)) return null;
  return { providerId: stored.providerId, nonce: stored.nonce, codeVerifier: stored.codeVerifier, returnTo: stored.returnTo, link: stored.link };
}
