// Who a single sign-on identity is here (docs/sso.md "Accounts"): the user
// linked to the provider's `sub` before; else, when a user has the same email,
// that user only if nothing but a provider ever let them in (no password, no
// TOTP, no passkey, no identity at another provider): a provider whose allowed
// domains cover an address must not become a way into an account someone
// secured otherwise. Such an account is linked only from its own session
// (`linkIdentity`, started by `POST /app/api/account/identities`). Else a new
// user, member of the provider's default project with its default role. Each
// step is one statement that tolerates a concurrent twin: two first sign-ins
// at once make one user and one link.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';

export interface SignedInIdentity {
  providerId: string;
  subject: string;
  email: string;
  name: string;
  defaultProjectId: string | null;
  defaultRole: 'owner' | 'admin' | 'member';
}

export type Provisioned =
  | { ok: true; user: { id: string; email: string; created: boolean } }
  /** The email belongs to an account with another way in: only its own session may link this identity. */
  | { ok: false; reason: 'link_required'; user: { id: string; email: string } };

async function linkedUser(db: Db, providerId: string, subject: string) {
  const { rows } = await db.execute<{ id: string; email: string }>(sql`
    select u.id, u.email from user_identities i join users u on u.id = i.user_id
    where i.provider_id = ${providerId} and i.subject = ${subject}`);
  return rows[0];
}

export async function provisionUser(db: Db, who: SignedInIdentity): Promise<Provisioned> {
  const linked = await linkedUser(db, who.providerId, who.subject);
  if (linked) return { ok: true, user: { ...linked, created: false } };

  // A new user, their membership of the default project and the link, in one statement;
  // nothing when the email already has a user.
  const { rows: made } = await db.execute<{ id: string }>(sql`
    with project as (
      select id from projects where id = ${who.defaultProjectId}::uuid
    ), made as (
      insert into users (email, name, email_verified_at, default_project_id)
      values (${who.email}, ${who.name}, now(), (select id from project))
      on conflict do nothing
      returning id
    ), member as (
      insert into memberships (project_id, user_id, role)
      select project.id, made.id, ${who.defaultRole}::member_role from made, project
    )
    insert into user_identities (provider_id, subject, user_id)
    select ${who.providerId}, ${who.subject}, id from made
    on conflict do nothing
    returning user_id as id`);
  if (made[0]) return { ok: true, user: { id: made[0].id, email: who.email, created: true } };

  // The email has a user: linked here only when this provider is all that lets them in.
  await db.execute(sql`
    with existing as (
      update users u set email_verified_at = coalesce(u.email_verified_at, now())
      where lower(u.email) = lower(${who.email})
        and u.password_hash is null and u.totp_enabled_at is null
        and not exists (select 1 from passkeys pk where pk.user_id = u.id)
        and not exists (select 1 from user_identities ui where ui.user_id = u.id and ui.provider_id <> ${who.providerId})
      returning u.id
    )
    insert into user_identities (provider_id, subject, user_id)
    select ${who.providerId}, ${who.subject}, id from existing
    on conflict do nothing`);
  const now = await linkedUser(db, who.providerId, who.subject);
  if (now) return { ok: true, user: { ...now, created: false } };
  const { rows: owner } = await db.execute<{ id: string; email: string }>(sql`
    select id, email from users where lower(email) = lower(${who.email})`);
  if (!owner[0]) throw new Error(`single sign-on of ${who.email} could not be linked to a user`);
  return { ok: false, reason: 'link_required', user: owner[0] };
}

export type Linked =
  | { ok: true; user: { id: string; email: string } }
  /** The session that started the link has ended (signed out, expired, or every session ended). */
  | { ok: false; reason: 'link_session' }
  /** This identity at the provider is linked to another account already. */
  | { ok: false; reason: 'identity_taken' };

/**
 * Links the identity to `userId`, the account whose session started the link
 * (services/oidc/pending-sign-in.ts), if that session is still live. The
 * provider's email need not be the account's: the account's owner chose it.
 */
export async function linkIdentity(db: Db, who: SignedInIdentity, link: { userId: string; sessionId: string }): Promise<Linked> {
  const { rows } = await db.execute<{ user_id: string; email: string; inserted: boolean }>(sql`
    with live as (
      select u.id, u.email from sessions s join users u on u.id = s.user_id
      where s.id = ${link.sessionId} and s.user_id = ${link.userId} and s.expires_at > now()
        and s.created_at > coalesce(u.sessions_valid_after, '-infinity'::timestamptz)
    ), added as (
      insert into user_identities (provider_id, subject, user_id)
      select ${who.providerId}, ${who.subject}, id from live
      on conflict do nothing
      returning user_id
    )
    select live.id as user_id, live.email, exists (select 1 from added) as inserted from live`);
  const live = rows[0];
  if (!live) return { ok: false, reason: 'link_session' };
  if (live.inserted) return { ok: true, user: { id: live.user_id, email: live.email } };
  const holder = await linkedUser(db, who.providerId, who.subject);
  return holder?.id === link.userId ? { ok: true, user: { id: live.user_id, email: live.email } } : { ok: false, reason: 'identity_taken' };
}
