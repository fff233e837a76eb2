import { sql } from 'drizzle-orm';
import { templates, templateVersions } from '@edgemail/schema';
import { iso } from '../../contracts/common.js';
import type { TemplateRecord, VersionRecord } from '../../contracts/template.js';

export type TemplateRow = typeof templates.$inferSelect;

export const versionColumns = {
  id: templateVersions.id, templateId: templateVersions.templateId, version: templateVersions.version,
  stylesheetId: templateVersions.stylesheetId, sampleData: templateVersions.sampleData,
  firstActivatedAt: templateVersions.firstActivatedAt, createdAt: templateVersions.createdAt, updatedAt: templateVersions.updatedAt,
  // The languages it has, read with it (the list shows which drafts have content yet).
  // Written out: drizzle drops the table name of columns inside a selected sql`` when it renders them.
  languages: sql<string[]>`coalesce((select array_agg(l.language order by l.language) from template_localizations l where l.version_id = "template_versions"."id"), '{}')`,
};
export type VersionRow = Omit<Pick<typeof templateVersions.$inferSelect, Exclude<keyof typeof versionColumns, 'languages'>>, never> & { languages: string[] };

export function presentTemplate(row: TemplateRow): TemplateRecord {
  return {
    id: row.id, name: row.name, description: row.description, default_language: row.defaultLanguage,
    active_version_id: row.activeVersionId, highest_version: row.highestVersion,
    created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString(),
  };
}

/** @param activeVersionId the template's, to mark the version sends resolve */
export function presentVersion(row: VersionRow, activeVersionId: string | null): VersionRecord {
  return {
    id: row.id, template_id: row.templateId, version: row.version, stylesheet_id: row.stylesheetId,
    sample_data: row.sampleData, active: row.id === activeVersionId, first_activated_at: iso(row.firstActivatedAt),
    languages: row.languages, created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString(),
  };
}
