import { desc, eq } from 'drizzle-orm';
import { templates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { presentTemplate } from './present.js';

/** The project's templates, newest first, without their versions (`GET .../{templateId}` has them). */
export async function listTemplates(db: Db, projectId: string) {
  const rows = await db.select().from(templates).where(eq(templates.projectId, projectId))
    .orderBy(desc(templates.createdAt), desc(templates.id));
  return { templates: rows.map(presentTemplate) };
}
