import type { Db } from '../../db/client.js';
import { findTemplate, versionRecords } from './find.js';
import { presentTemplate } from './present.js';

/** The template with its version list (the spec: the same list `GET .../versions` returns). */
export async function getTemplate(db: Db, projectId: string, templateId: string) {
  const template = await findTemplate(db, projectId, templateId);
  return { template: { ...presentTemplate(template), versions: await versionRecords(db, projectId, template) } };
}
