import { and, eq } from 'drizzle-orm';
import { suppressions } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { presentSuppression, suppressionColumns } from './present.js';

/** One entry of the project's, expired or not (`expires_at` says which). */
export async function getSuppression(db: Db, projectId: string, id: string) {
  const [row] = await db.select(suppressionColumns).from(suppressions)
    .where(and(eq(suppressions.projectId, projectId), eq(suppressions.id, id)));
  if (!row) throw notFound('suppression not found');
  return presentSuppression(row);
}
