import { eq } from 'drizzle-orm';
import { projects } from '@edgemail/schema';
import type { Db } from '../../db/client.js';

/** Deletes the project and, by cascade, everything it owns. */
export async function deleteProject(db: Db, projectId: string): Promise<void> {
  await db.delete(projects).where(eq(projects.id, projectId));
}
