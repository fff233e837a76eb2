import { templates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { conflict } from '../errors.js';
import type { CreateTemplateInput } from '../../contracts/template.js';
import { presentTemplate } from './present.js';

export const nameTaken = (name: string) => conflict(`a template named "${name}" already exists`);

/** A new template, with no version yet (highest_version 0: its first version is 1). */
export async function createTemplate(db: Db, projectId: string, input: CreateTemplateInput) {
  try {
    const [row] = await db.insert(templates).values({
      projectId, name: input.name, description: input.description ?? null, defaultLanguage: input.default_language ?? 'en',
    }).returning();
    return { template: { ...presentTemplate(row!), versions: [] } };
  } catch (e) {
    if (isUniqueViolation(e)) throw nameTaken(input.name);
    throw e;
  }
}
