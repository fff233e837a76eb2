// Accepting an invitation from its mailed link. The token proves the mailbox:
// a new account is made with that address verified and the password given;
// an existing account just gets the membership (its password is not touched:
// that is the password reset's job). Every refusal of the token is the same
// one, and changes nothing.
import { sql } from 'drizzle-orm';
import { auditEvents, invitations, memberships, users } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { conflict, invalid } from '../errors.js';
import { hashPassword } from '../console/password.js';
import { passwordProblem } from '../console/password-policy.js';
import type { AcceptInvitationInput } from '../../contracts/member.js';
import { mailedTokenHash } from './token.js';

export const INVALID_INVITATION = 'invalid, expired or already used invitation token';

type Found = { id: string; project_id: string; email: string; user_id: string | null };
type Accepted = { user_id: string | null; project_id: string; role: 'owner' | 'admin' | 'member' | null };

/** Where the request came from, for the project's audit trail. */
export interface AcceptRequest { clientIp: string; method: string; path: string }

export async function acceptInvitation(db: Db, input: AcceptInvitationInput, request: AcceptRequest) {
  const hash = await mailedTokenHash(input.token);
  const { rows: [found] } = await db.execute<Found>(sql`
    select i.id, i.project_id, i.email, u.id as user_id
    from ${invitations} i left join ${users} u on lower(u.email) = lower(i.email)
    where i.token_hash = ${hash} and i.accepted_at is null and i.expires_at > now()`);
  if (!found) throw invalid(INVALID_INVITATION, { token: 'invalid, expired or already used' });

  const create = found.user_id === null;
  if (!create && input.password !== undefined) {
    throw invalid('password: this address already has an account; accept without a password (reset it to change it)', { password: 'not accepted for an existing account' });
  }
  if (create) {
    if (input.password === undefined) throw invalid('password: required to create the account', { password: 'required' });
    const problem = passwordProblem(input.password, found.email);
    if (problem) throw invalid(`password: ${problem}`, { password: problem });
  }
  const passwordHash = create ? hashPassword(input.password!) : null;

  // One statement: the invitation is taken (FOR UPDATE: a concurrent accept
  // waits, then finds it used) only together with the account and membership.
  const statement = sql`
    with inv as (
      select i.id, i.project_id, i.email, i.role, i.group_id from ${invitations} i
      where i.id = ${found.id} and i.accepted_at is null and i.expires_at > now() for update
    ),
    created as (
      insert into ${users} (email, name, password_hash, email_verified_at, default_project_id)
      select inv.email, ${input.name ?? ''}, ${passwordHash}, now(), inv.project_id from inv where ${create}
      returning id
    ),
    usr as (
      select id from created
      union all select u.id from ${users} u, inv where not ${create} and lower(u.email) = lower(inv.email)
    ),
    joined as (
      insert into ${memberships} (project_id, user_id, role, group_id)
      select inv.project_id, usr.id, inv.role, inv.group_id from inv, usr
      on conflict (project_id, user_id) do nothing
      returning role
    ),
    verified as (
      update ${users} u set email_verified_at = coalesce(u.email_verified_at, now()), default_project_id = coalesce(u.default_project_id, inv.project_id)
      from inv where not ${create} and u.id in (select id from usr)
      returning u.id
    ),
    used as (
      update ${invitations} set accepted_at = now() where id in (select id from inv) and exists (select 1 from usr) returning id
    ),
    logged as (
      insert into ${auditEvents} (category, type, project_id, actor_id, actor_email, client_ip, method, path, status, detail)
      select 'project', 'invitation.accepted', inv.project_id, usr.id, inv.email, ${request.clientIp}, ${request.method}, ${request.path}, 200,
        case when ${create} then 'account created' else 'existing account' end
      from inv, usr
    )
    select (select id from usr) as user_id, inv.project_id,
      coalesce((select role from joined), (select m.role from ${memberships} m, usr where m.project_id = inv.project_id and m.user_id = usr.id)) as role
    from inv`;
  let accepted: Accepted | undefined;
  try {
    [accepted] = (await db.execute<Accepted>(statement)).rows;
  } catch (e) {
    // Another invitation made the account of this address at the same moment.
    if (isUniqueViolation(e)) throw conflict('the account of this address changed meanwhile: try again');
    throw e;
  }
  if (!accepted) throw invalid(INVALID_INVITATION, { token: 'invalid, expired or already used' });
  // The account the read found was deleted since: nothing was taken.
  if (!accepted.user_id) throw conflict('the account of this address changed meanwhile: try again');
  return { user_id: accepted.user_id, project_id: accepted.project_id, role: accepted.role!, account_created: create };
}
