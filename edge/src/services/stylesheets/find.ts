import { and, eq } from 'drizzle-orm';
import { stylesheets } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';

export const stylesheetNotFound = () => notFound('stylesheet not found');

/** The project's stylesheet, or 404. */
export async function findStylesheet(db: Db, projectId: string, id: string) {
  const [row] = await db.select().from(stylesheets).where(and(eq(stylesheets.projectId, projectId), eq(stylesheets.id, id)));
  if (!row) throw stylesheetNotFound();
  return row;
}
