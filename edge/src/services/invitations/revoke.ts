import { sql } from 'drizzle-orm';
import { invitations } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';

/** Deletes a pending invitation: its link is refused from then on like an unknown one. */
export async function revokeInvitation(db: Db, projectId: string, id: string): Promise<void> {
  const { rows } = await db.execute(sql`
    delete from ${invitations} where id = ${id} and project_id = ${projectId} and accepted_at is null returning id`);
  if (!rows.length) throw notFound('invitation not found (or already accepted)');
}
