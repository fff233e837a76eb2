import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { templateLocalizations, templates, templateVersions } from '@edgemail/schema';
import { presentVersion, versionColumns } from '../templates/present.js';
import type { LocalizationRecord } from '../../contracts/template.js';
import { cursorText, newestFirst, olderThan, PAGE_ROWS, withinBodyBudget, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/**
 * Every version of every template, each as `GET .../versions` lists it with
 * its `localizations` as `GET .../versions/{id}/localizations` returns them.
 * A page stops at PAGE_BODY_BYTES of localized content (50 languages of
 * 512 kB each would not fit many versions to a page).
 */
export const templateVersionSource = exportSource<Cursor>({
  type: 'template_version',
  async read({ db, projectId }, cursor) {
    const rows = await db.select({
      ...versionColumns,
      activeVersionId: templates.activeVersionId,
      cursorAt: cursorText(templateVersions.createdAt),
      bytes: sql<number>`(select coalesce(sum(octet_length(l.subject) + coalesce(octet_length(l.html), 0) + coalesce(octet_length(l."text"), 0)), 0)::int
        from template_localizations l where l.version_id = "template_versions"."id")`,
    }).from(templateVersions)
      .innerJoin(templates, eq(templates.id, templateVersions.templateId))
      .where(and(eq(templateVersions.projectId, projectId), olderThan(cursor, templateVersions.createdAt, templateVersions.id)))
      .orderBy(...newestFirst(templateVersions.createdAt, templateVersions.id, 'desc'))
      .limit(PAGE_ROWS);
    const { kept, more } = withinBodyBudget(rows);

    const localizations = kept.length
      ? await db.select().from(templateLocalizations)
        .where(inArray(templateLocalizations.versionId, kept.map((r) => r.id)))
        .orderBy(asc(templateLocalizations.versionId), asc(templateLocalizations.language))
      : [];
    const byVersion = new Map<string, LocalizationRecord[]>();
    for (const l of localizations) {
      const list = byVersion.get(l.versionId) ?? [];
      list.push({ language: l.language, subject: l.subject, html: l.html, text: l.text });
      byVersion.set(l.versionId, list);
    }

    const records = kept.map((r) => ({ ...presentVersion(r, r.activeVersionId), localizations: byVersion.get(r.id) ?? [] }));
    const last = kept.at(-1);
    return { records, next: more && last ? { at: last.cursorAt, id: last.id } : null };
  },
});
