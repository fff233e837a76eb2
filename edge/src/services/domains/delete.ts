import { and, eq } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';

/**
 * Removes a domain: relay nodes stop accepting mail for it once they refresh
 * their list. Mail already stored for it stays (its `domain_id` becomes null).
 */
export async function deleteDomain(db: Db, projectId: string, id: string): Promise<void> {
  const deleted = await db.delete(domains)
    .where(and(eq(domains.projectId, projectId), eq(domains.id, id)))
    .returning({ id: domains.id });
  if (!deleted.length) throw notFound('domain not found');
}
