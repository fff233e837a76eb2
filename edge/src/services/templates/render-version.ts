// Rendering a stored version: the template, the version (a given one, or the
// template's active one, read in the same statement a send runs it, so the
// very next send after an activation uses the new one), the localizations a
// language could fall back to, and the stylesheet, in one round trip; then
// the pure render (render.ts). A send may take the active version's row from
// the isolate's cache instead (active-cache.ts): its statement then checks
// that the version is still the active one.
import { sql } from 'drizzle-orm';
import { stylesheets, templateLocalizations, templates, templateVersions } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { invalid, notFound, unprocessable } from '../errors.js';
import { canonicalLanguage, pickLanguage } from './pick-language.js';
import { renderContent, type RenderedContent, type RenderLimits } from './render.js';
import { cachedActive, keepActive } from './active-cache.js';

export interface RenderRequest {
  templateId: string;
  /** A version of that template; the active one when absent. */
  versionId?: string;
  language?: string;
  /** The data; the version's `sample_data` when absent. */
  data?: Record<string, unknown>;
  /** How the request names its fields in a refusal (`template_id`, `messages.2.template_id`). */
  field?: (name: string) => string;
  /** The render's bounds (`renderLimits(config)`). */
  limits: RenderLimits;
  /**
   * For the active version only (a send): `use` takes the row from the
   * isolate's cache when there, `refresh` reads it; both keep what they read.
   * The caller must then check `versionId` and `defaultLanguage` are still
   * the template's in the statement that uses the render.
   */
  cache?: 'use' | 'refresh';
}

export interface RenderedVersion extends RenderedContent {
  templateId: string;
  versionId: string;
  version: number;
  /** The language rendered (after the fallback). */
  language: string;
  /** The template's default language the fallback used. */
  defaultLanguage: string;
}

interface Row extends Record<string, unknown> {
  default_language: string;
  version_id: string | null;
  version: number | null;
  sample_data: string | null;
  css: string | null;
  languages: string[];
  localizations: { language: string; subject: string; html: string | null; text: string | null }[];
}

/**
 * Renders the version; throws 404 (no such template in the project, or no
 * such version of it), 400 (language not BCP 47), 422 (no active version, no
 * localization, sample data that is not an object, a render that fails or
 * crosses a bound of `req.limits`).
 */
export async function renderVersion(db: Db, projectId: string, req: RenderRequest, reads?: VersionReads): Promise<RenderedVersion> {
  const field = req.field ?? ((name: string) => name);
  const key = `${req.templateId} ${req.versionId ?? 'active'} ${req.language ?? ''}`;
  let read = reads?.get(key);
  if (!read) {
    read = req.versionId === undefined && req.cache ? activeRow(db, projectId, req, req.cache) : readVersion(db, projectId, req);
    reads?.set(key, read);
  }
  const row = await read;
  if (!row) throw notFound(`template ${req.templateId} not found`);
  if (!row.version_id || row.version === null) {
    if (req.versionId !== undefined) throw notFound(`version ${req.versionId} of template ${req.templateId} not found`);
    throw unprocessable(`template ${req.templateId} has no active version: activate one first (POST /api/v1/templates/${req.templateId}/activate/{versionId})`, { [field('template_id')]: 'has no active version' });
  }

  const language = pickLanguage(req.language, row.languages, row.default_language, field('language'));
  const localization = row.localizations.find((l) => l.language === language)!;
  const data = req.data ?? sampleData(row.sample_data, field);
  const rendered = renderContent(localization, data, row.css, req.limits);
  return { ...rendered, templateId: req.templateId, versionId: row.version_id, version: row.version, language, defaultLanguage: row.default_language };
}

/**
 * The reads of one request, by template, version and language: a batch
 * naming one template many times reads it once, and all its messages render
 * the same version even if an activation commits in between.
 */
export type VersionReads = Map<string, Promise<Row | undefined>>;

/** The active version's row from the isolate's cache, or read and kept; see `RenderRequest.cache`. */
async function activeRow(db: Db, projectId: string, req: RenderRequest, cache: 'use' | 'refresh'): Promise<Row | undefined> {
  if (cache === 'use') {
    const hit = cachedActive<Row>(projectId, req.templateId, req.language);
    if (hit) return hit;
  }
  const row = await readVersion(db, projectId, req);
  // Only a version to render is kept: a template without one is read again (it may get one at any time).
  if (row?.version_id) {
    const size = (row.css?.length ?? 0) + row.localizations.reduce((n, l) => n + l.subject.length + (l.html?.length ?? 0) + (l.text?.length ?? 0), 0);
    keepActive(projectId, req.templateId, req.language, row, size);
  }
  return row;
}

/** The one query (see the file comment); undefined when the project has no such template. */
async function readVersion(db: Db, projectId: string, req: RenderRequest): Promise<Row | undefined> {
  const requested = req.language === undefined ? null : canonicalLanguage(req.language);
  // The tags the fallback may land on before the default (the default is the template's, known in SQL).
  const candidates = requested ? [requested, new Intl.Locale(requested).language] : [];
  const version = req.versionId === undefined ? sql`t.active_version_id` : sql`${req.versionId}::uuid`;
  const result = await db.execute<Row>(sql`
    select t.default_language, v.id as version_id, v.version, v.sample_data, s.css,
      coalesce((select array_agg(l.language order by l.language) from ${templateLocalizations} l where l.version_id = v.id), '{}') as languages,
      coalesce((select json_agg(json_build_object('language', l.language, 'subject', l.subject, 'html', l.html, 'text', l.text))
        from ${templateLocalizations} l
        where l.version_id = v.id and (l.language in (select jsonb_array_elements_text(${JSON.stringify(candidates)}::jsonb)) or l.language = t.default_language)), '[]') as localizations
    from ${templates} t
      left join ${templateVersions} v on v.id = ${version} and v.template_id = t.id
      left join ${stylesheets} s on s.id = v.stylesheet_id
    where t.project_id = ${projectId} and t.id = ${req.templateId}::uuid`);
  return result.rows[0];
}

/** The version's sample data as the render's data: a JSON object, or none ({}). */
function sampleData(stored: string | null, field: (name: string) => string): Record<string, unknown> {
  if (stored === null) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    throw invalid(`the version's sample_data is not valid JSON: give ${field('data')}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw unprocessable(`the version's sample_data is not a JSON object, so it cannot be the render's data: give ${field('data')} or set sample_data to an object`);
  }
  return parsed as Record<string, unknown>;
}
