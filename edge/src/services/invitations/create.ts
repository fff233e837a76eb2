// Inviting an address into a project: the invitation row (its token hashed)
// and its mail, written in one transaction, so no mail goes out for an
// invitation that is not stored, nor the reverse. A new invitation to the
// same address replaces a pending one (its link stops working).
import { sql } from 'drizzle-orm';
import { invitations, memberGroups, memberships, projects, users } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { conflict, invalid, notFound } from '../errors.js';
import { ownershipRefused } from '../members/ownership.js';
import type { CreateInvitationInput } from '../../contracts/member.js';
import type { PeopleActor } from '../members/types.js';
import { escapeHtml, prepareSystemMail, systemMailStatement, type SystemMail } from '../system-mail/send.js';
import { invitationColumns, presentInvitation, type InvitationRow } from './present.js';
import { consoleLink, newMailedToken } from './token.js';

type InviteConfig = Pick<Config, 'console.invitation_ttl' | 'console.mail_from' | 'server.public_url' | 'database.crypto.encryption_key'>;

export async function createInvitation(db: Db, config: InviteConfig, projectId: string, input: CreateInvitationInput, actor: PeopleActor) {
  if (input.role === 'owner' && !actor.owner) throw ownershipRefused(actor, 'project owner role required to invite an owner');
  const { rows: [found] } = await db.execute<{ name: string; group_ok: boolean; member: boolean }>(sql`
    select p.name,
      (${input.group_id ?? null}::uuid is null or exists (select 1 from ${memberGroups} g where g.id = ${input.group_id ?? null}::uuid and g.project_id = p.id)) as group_ok,
      exists (select 1 from ${memberships} m join ${users} u on u.id = m.user_id where m.project_id = p.id and lower(u.email) = lower(${input.email})) as member
    from ${projects} p where p.id = ${projectId}`);
  if (!found) throw notFound('project not found');
  if (!found.group_ok) throw invalid('group_id: no such member group in this project', { group_id: 'no such member group in this project' });
  if (found.member) throw conflict(`${input.email} is already a member of this project`);

  const { token, hash } = await newMailedToken();
  const expiresAt = new Date(Date.now() + config['console.invitation_ttl']);
  const mail = invitationMail(found.name, input.role, consoleLink(config['server.public_url'], 'invitation', token), expiresAt);
  await prepareSystemMail(db, config);
  const [, inserted] = await db.batch([
    db.execute(sql`delete from ${invitations} where project_id = ${projectId} and lower(email) = lower(${input.email}) and accepted_at is null`),
    db.execute<InvitationRow>(sql`
      insert into ${invitations} (project_id, email, role, group_id, token_hash, invited_by, expires_at)
      values (${projectId}, ${input.email}, ${input.role}, ${input.group_id ?? null}, ${hash}, ${actor.userId}, ${expiresAt.toISOString()})
      returning ${sql.raw(invitationColumns)}`),
    db.execute(systemMailStatement(config, mail, sql`${input.email}::text`, sql`(select 1) one`)),
  ]);
  return presentInvitation(inserted.rows[0]!);
}

function invitationMail(project: string, role: string, link: string, expiresAt: Date): SystemMail {
  const until = expiresAt.toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    subject: `You are invited to ${project} on edgemail`,
    text: [
      `You are invited to join the project "${project}" on edgemail as ${role}.`,
      '', `Accept the invitation: ${link}`, '',
      `The link works once, until ${until}. If you did not expect this invitation, ignore this mail.`,
    ].join('\n'),
    html: `<p>You are invited to join the project <strong>${escapeHtml(project)}</strong> on edgemail as ${role}.</p>
<p><a href="${escapeHtml(link)}">Accept the invitation</a></p>
<p>The link works once, until ${until}. If you did not expect this invitation, ignore this mail.</p>`,
  };
}
