import { and, eq } from 'drizzle-orm';
import { memberGroups } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';

/** Its members go back to their role's permissions, its pending invitations to the invited role (both foreign keys set null). */
export async function deleteMemberGroup(db: Db, projectId: string, id: string): Promise<void> {
  const deleted = await db.delete(memberGroups)
    .where(and(eq(memberGroups.projectId, projectId), eq(memberGroups.id, id)))
    .returning({ id: memberGroups.id });
  if (!deleted.length) throw notFound('member group not found');
}
