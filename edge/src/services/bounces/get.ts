import { and, eq } from 'drizzle-orm';
import { bounces } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { bounceColumns, presentBounce } from './present.js';

/** The project's bounce `id`; another project's is not found, as a missing one is. */
export async function getBounce(db: Db, projectId: string, id: string) {
  const [row] = await db.select(bounceColumns).from(bounces)
    .where(and(eq(bounces.projectId, projectId), eq(bounces.id, id)));
  if (!row) throw notFound('bounce not found');
  return presentBounce(row);
}
