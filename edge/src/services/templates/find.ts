// Reads of one template and its versions, scoped to the project in SQL. The
// rendering and sending code reads through these too.
import { and, asc, desc, eq } from 'drizzle-orm';
import { templateLocalizations, templates, templateVersions } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { presentVersion, versionColumns, type TemplateRow } from './present.js';

export const templateNotFound = () => notFound('template not found');
export const versionNotFound = () => notFound('template version not found');

/** The project's template, or 404. */
export async function findTemplate(db: Db, projectId: string, templateId: string): Promise<TemplateRow> {
  const [row] = await db.select().from(templates).where(and(eq(templates.projectId, projectId), eq(templates.id, templateId)));
  if (!row) throw templateNotFound();
  return row;
}

/** A template's versions as records, newest number first. */
export async function versionRecords(db: Db, projectId: string, template: Pick<TemplateRow, 'id' | 'activeVersionId'>) {
  const rows = await db.select(versionColumns).from(templateVersions)
    .where(and(eq(templateVersions.projectId, projectId), eq(templateVersions.templateId, template.id)))
    .orderBy(desc(templateVersions.version));
  return rows.map((r) => presentVersion(r, template.activeVersionId));
}

/**
 * One version of the project's template with its localizations (sorted by
 * language), or null when the template or the version is not the project's,
 * or the version belongs to another template.
 */
export async function findVersion(db: Db, projectId: string, templateId: string, versionId: string) {
  const [version] = await db.select().from(templateVersions).where(and(
    eq(templateVersions.projectId, projectId), eq(templateVersions.templateId, templateId), eq(templateVersions.id, versionId),
  ));
  if (!version) return null;
  const localizations = await db.select().from(templateLocalizations)
    .where(eq(templateLocalizations.versionId, versionId)).orderBy(asc(templateLocalizations.language));
  return { version, localizations };
}

/** The version as a record, or 404 naming the template or the version. */
export async function versionRecord(db: Db, projectId: string, templateId: string, versionId: string) {
  const template = await findTemplate(db, projectId, templateId);
  const [row] = await db.select(versionColumns).from(templateVersions).where(and(
    eq(templateVersions.projectId, projectId), eq(templateVersions.templateId, templateId), eq(templateVersions.id, versionId),
  ));
  if (!row) throw versionNotFound();
  return presentVersion(row, template.activeVersionId);
}
