// Templates written straight into the tables (schema/src/templates.ts), so
// the rendering and sending tests do not depend on the CRUD routes' bodies.
import type { TestStack } from './stack.js';

export interface LocalizationRow { language: string; subject: string; html?: string | null; text?: string | null }

/** A template of `projectId`; its versions come from `addVersion`. */
export async function addTemplate(stack: TestStack, projectId: string, name: string, defaultLanguage = 'en'): Promise<string> {
  const { rows: [row] } = await stack.sql.query(
    'INSERT INTO templates (project_id, name, default_language) VALUES ($1, $2, $3) RETURNING id', [projectId, name, defaultLanguage]);
  return (row as { id: string }).id;
}

/** A version numbered one above the template's highest, with its localizations; active when `activate`. */
export async function addVersion(stack: TestStack, templateId: string, opts: {
  localizations: LocalizationRow[]; sampleData?: string | null; stylesheetId?: string | null; activate?: boolean;
}): Promise<string> {
  const { rows: [row] } = await stack.sql.query(`
    WITH bumped AS (UPDATE templates SET highest_version = highest_version + 1 WHERE id = $1 RETURNING project_id, highest_version)
    INSERT INTO template_versions (template_id, project_id, version, sample_data, stylesheet_id)
    SELECT $1, project_id, highest_version, $2, $3 FROM bumped RETURNING id`, [templateId, opts.sampleData ?? null, opts.stylesheetId ?? null]);
  const versionId = (row as { id: string }).id;
  for (const l of opts.localizations) {
    await stack.sql.query('INSERT INTO template_localizations (version_id, language, subject, html, text) VALUES ($1, $2, $3, $4, $5)',
      [versionId, l.language, l.subject, l.html ?? null, l.text ?? null]);
  }
  if (opts.activate) await activate(stack, templateId, versionId);
  return versionId;
}

/** What the activate route does, for tests that do not exercise it. */
export async function activate(stack: TestStack, templateId: string, versionId: string): Promise<void> {
  await stack.sql.query('UPDATE template_versions SET first_activated_at = coalesce(first_activated_at, now()) WHERE id = $1', [versionId]);
  await stack.sql.query('UPDATE templates SET active_version_id = $2 WHERE id = $1', [templateId, versionId]);
}

export async function addStylesheet(stack: TestStack, projectId: string, name: string, css: string): Promise<string> {
  const { rows: [row] } = await stack.sql.query('INSERT INTO stylesheets (project_id, name, css) VALUES ($1, $2, $3) RETURNING id', [projectId, name, css]);
  return (row as { id: string }).id;
}
