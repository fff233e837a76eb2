import { and, eq, sql } from 'drizzle-orm';
import { templates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { UpdateTemplateInput } from '../../contracts/template.js';
import { nameTaken } from './create.js';
import { templateNotFound, versionRecords } from './find.js';
import { presentTemplate } from './present.js';

/** Changes name, description or default language; versions are untouched. */
export async function updateTemplate(db: Db, projectId: string, templateId: string, input: UpdateTemplateInput) {
  try {
    const [row] = await db.update(templates).set({
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.default_language !== undefined ? { defaultLanguage: input.default_language } : {}),
      updatedAt: sql`now()`,
    }).where(and(eq(templates.projectId, projectId), eq(templates.id, templateId))).returning();
    if (!row) throw templateNotFound();
    return { template: { ...presentTemplate(row), versions: await versionRecords(db, projectId, row) } };
  } catch (e) {
    if (isUniqueViolation(e) && input.name !== undefined) throw nameTaken(input.name);
    throw e;
  }
}
