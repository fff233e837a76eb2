import { sql } from 'drizzle-orm';
import { invitations } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { invitationColumns, presentInvitation, type InvitationRow } from './present.js';

/** Pending invitations: not accepted and not expired, newest first. */
export async function listInvitations(db: Db, projectId: string) {
  const { rows } = await db.execute<InvitationRow>(sql`
    select ${sql.raw(invitationColumns)} from ${invitations}
    where project_id = ${projectId} and accepted_at is null and expires_at > now()
    order by created_at desc, id`);
  return rows.map(presentInvitation);
}
