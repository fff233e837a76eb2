import { and, eq } from 'drizzle-orm';
import { suppressions } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';

export async function deleteSuppression(db: Db, projectId: string, id: string): Promise<void> {
  const deleted = await db.delete(suppressions)
    .where(and(eq(suppressions.projectId, projectId), eq(suppressions.id, id)))
    .returning({ id: suppressions.id });
  if (!deleted.length) throw notFound('suppression not found');
}
