// Who a single sign-on identity is here (docs/sso.md "Accounts"): the user
// linked to the provider's `sub` before; else the user with the same email
// (the provider vouched for it and the domain is allowed), linked now; else
// a new user, member of the provider's default project with its default
// role. Each step is one statement that tolerates a concurrent twin: two
// first sign-ins at once make one user and one link.
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

async function linkedUser(db: Db, providerId: string, subject: string) {
  const { rows } = await db.execute<{ id: string; email: string }>(sql`
    select u.id, u.email from user_identities i join users u on u.id = i.user_id
    where i.provider_id = ${providerId} and i.subject = ${subject}`);
  return rows[0];
}

export async function provisionUser(db: Db, who: SignedInIdentity): Promise<{ id: string; email: string; created: boolean }> {
  const linked = await linkedUser(db, who.providerId, who.subject);
  if (linked) return { ...linked, created: false };

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
  if (made[0]) return { id: made[0].id, email: who.email, created: true };

  // The email has a user: link it (the provider verified the address), and mark the address verified.
  await db.execute(sql`
    with existing as (
      update users set email_verified_at = coalesce(email_verified_at, now())
      where lower(email) = lower(${who.email}) returning id
    )
    insert into user_identities (provider_id, subject, user_id)
    select ${who.providerId}, ${who.subject}, id from existing
    on conflict do nothing`);
  const now = await linkedUser(db, who.providerId, who.subject);
  if (!now) throw new Error(`single sign-on of ${who.email} could not be linked to a user`);
  return { ...now, created: false };
}
