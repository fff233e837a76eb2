import { desc, eq } from 'drizzle-orm';
import { stylesheets } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { presentStylesheet } from './present.js';

/** The project's stylesheets, newest first. */
export async function listStylesheets(db: Db, projectId: string) {
  const rows = await db.select().from(stylesheets).where(eq(stylesheets.projectId, projectId))
    .orderBy(desc(stylesheets.createdAt), desc(stylesheets.id));
  return { stylesheets: rows.map(presentStylesheet) };
}
