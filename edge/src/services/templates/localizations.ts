import { asc, eq, sql } from 'drizzle-orm';
import { templateLocalizations } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { LocalizationRecord, PutLocalizationsInput } from '../../contracts/template.js';
import { findVersion, versionNotFound, versionRecord } from './find.js';
import { versionFrozen } from './frozen.js';
import { checkNesting } from './render.js';

async function localizationRecords(db: Db, versionId: string): Promise<LocalizationRecord[]> {
  const rows = await db.select().from(templateLocalizations)
    .where(eq(templateLocalizations.versionId, versionId)).orderBy(asc(templateLocalizations.language));
  return rows.map((r) => ({ language: r.language, subject: r.subject, html: r.html, text: r.text }));
}

/** A version's localizations, sorted by language. */
export async function listLocalizations(db: Db, projectId: string, templateId: string, versionId: string) {
  await versionRecord(db, projectId, templateId, versionId); // 404 naming the template or the version
  return { localizations: await localizationRecords(db, versionId) };
}

/**
 * Replaces a draft's localizations with `input`'s, in one statement: the
 * version row is locked only while never activated (an activation committing
 * first leaves nothing to lock: 409), the old set is deleted before the new
 * one is inserted (the scalar subquery on `gone` runs first), and a failure
 * leaves the old set as it was. A part nesting sections deeper than
 * `maxDepth` (`templates.max_nesting_depth`) is 422 and nothing is written.
 */
export async function putLocalizations(db: Db, projectId: string, templateId: string, versionId: string, input: PutLocalizationsInput, maxDepth: number) {
  // Nesting deeper than a render may go is refused now, not at every send (422 naming the part and the setting).
  input.localizations.forEach((l, i) => {
    for (const part of ['subject', 'html', 'text'] as const) {
      const template = l[part];
      if (typeof template === 'string') checkNesting(`localizations.${i}.${part}`, template, maxDepth, `localizations.${i}.${part}`);
    }
  });
  const set = JSON.stringify(input.localizations.map((l) => ({ language: l.language, subject: l.subject, html: l.html ?? null, text: l.text ?? null })));
  const { rows: [result] } = await db.execute<{ found: number }>(sql`
    with v as (
      select id from template_versions
      where id = ${versionId} and template_id = ${templateId} and project_id = ${projectId} and first_activated_at is null
      for update),
    gone as (delete from template_localizations where version_id in (select id from v) returning 1),
    added as (
      insert into template_localizations (version_id, language, subject, html, "text")
      select v.id, x.language, x.subject, x.html, x."text"
      from v, jsonb_to_recordset(${set}::jsonb) as x(language text, subject text, html text, "text" text)
      where (select count(*) from gone) >= 0
      returning 1),
    touched as (update template_versions set updated_at = now() where id in (select id from v) returning 1)
    select (select count(*) from v)::int as found, (select count(*) from added)::int as added, (select count(*) from touched)::int as touched`);
  if (!result?.found) {
    const found = await findVersion(db, projectId, templateId, versionId);
    if (found?.version.firstActivatedAt) throw versionFrozen(found.version.version);
    await versionRecord(db, projectId, templateId, versionId); // 404 naming the template or the version
    throw versionNotFound();
  }
  return { localizations: await localizationRecords(db, versionId) };
}
