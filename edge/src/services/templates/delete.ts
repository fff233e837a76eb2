import { and, eq } from 'drizzle-orm';
import { templates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { templateNotFound } from './find.js';

/**
 * Removes a template with its versions and their localizations (foreign-key
 * cascade). Messages already sent keep their record; their template ids point
 * at nothing from then on.
 */
export async function deleteTemplate(db: Db, projectId: string, templateId: string): Promise<void> {
  const deleted = await db.delete(templates)
    .where(and(eq(templates.projectId, projectId), eq(templates.id, templateId)))
    .returning({ id: templates.id });
  if (!deleted.length) throw templateNotFound();
}
