import type { Db } from '../../db/client.js';
import { findTemplate, versionRecords } from './find.js';

/** The template's versions, newest number first. */
export async function listVersions(db: Db, projectId: string, templateId: string) {
  const template = await findTemplate(db, projectId, templateId);
  return { versions: await versionRecords(db, projectId, template) };
}
