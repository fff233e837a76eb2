// Templates, their numbered versions and each version's localizations
// (docs/templates.md). The limits are constants here, named in the schemas'
// messages and in the OpenAPI descriptions; the whole body is also bounded by
// `server.max_body_bytes` (413).
import { z } from '@hono/zod-openapi';
import { Timestamp, Uuid } from './common.js';
import { keysetCursor, keysetQuery } from './keyset.js';

export const TEMPLATE_NAME_MAX = 200;
export const TEMPLATE_DESCRIPTION_MAX = 2000;
export const SAMPLE_DATA_MAX = 65_536;
export const LOCALIZATIONS_MAX = 50;
export const SUBJECT_MAX = 998;
export const HTML_MAX = 512_000;
export const TEXT_MAX = 256_000;
export const TEMPLATES_LIMIT_DEFAULT = 50;
export const TEMPLATES_LIMIT_MAX = 200;

/** `required` for a missing field, else `problem` (zod's own text names JavaScript types). */
const requiredOr = (problem: string) => ({ error: (issue: { input?: unknown }) => (issue.input === undefined ? 'required' : problem) });

/** A string field PostgreSQL can store: its text type refuses NUL. */
const text = (max: number) => z.string(requiredOr('must be a string'))
  .max(max, `must be at most ${max} characters`)
  .refine((s) => !s.includes('\0'), 'must not contain NUL characters');

/**
 * A BCP 47 language tag in its canonical form (`en`, `pt-BR`, `zh-Hant-TW`),
 * or the problem with it. `Intl.getCanonicalLocales` (V8's ICU, on workerd
 * too) is the parser: it refuses what is not a well-formed tag.
 * @example canonicalLanguage('EN-us') // { tag: 'en-US' }
 */
export function canonicalLanguage(input: string): { tag: string } | { problem: string } {
  const refused = { problem: 'must be a BCP 47 language tag (en, pt-BR)' };
  // One tag, not a list; `_` is a common slip (en_US) that the parser refuses too.
  if (!input || input.length > 35 || /[^A-Za-z0-9-]/.test(input)) return refused;
  try {
    const [tag] = Intl.getCanonicalLocales(input);
    return tag ? { tag } : refused;
  } catch {
    return refused;
  }
}

export const LanguageTag = z.string(requiredOr('must be a string'))
  .transform((text, ctx) => {
    const result = canonicalLanguage(text);
    if ('problem' in result) {
      ctx.addIssue({ code: 'custom', message: result.problem });
      return z.NEVER;
    }
    return result.tag;
  })
  .openapi({ type: 'string', example: 'pt-BR', description: 'BCP 47 language tag; stored in canonical case (`EN-us` becomes `en-US`)' });

const isJsonDocument = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** The spec's type: a JSON document encoded as a string, never an object. */
const SampleData = z.string({
  error: (issue) => (issue.input !== null && typeof issue.input === 'object'
    ? 'must be a string holding a JSON document, not an object: send JSON.stringify(data)'
    : 'must be a string holding a JSON document'),
})
  .max(SAMPLE_DATA_MAX, `must be at most ${SAMPLE_DATA_MAX} characters`)
  .refine(isJsonDocument, 'must be a string holding valid JSON')
  .refine((s) => !s.includes('\0'), 'must not contain NUL characters')
  .nullable()
  .openapi({
    example: '{"name":"Ada","reset_url":"https://example.org/r/1"}',
    description: `A JSON document encoded as a string (not an object), at most ${SAMPLE_DATA_MAX} characters; preview renders with it when no data is given. null clears it.`,
  });

const StylesheetRef = Uuid.nullable().openapi({ description: 'A stylesheet of this project (400 naming `stylesheet_id` otherwise); null clears it.' });

const Name = text(TEMPLATE_NAME_MAX).transform((s) => s.trim())
  .refine((s) => s !== '', 'must not be empty')
  .openapi({ example: 'password-reset', description: `Unique in the project (409 otherwise), at most ${TEMPLATE_NAME_MAX} characters` });
const Description = text(TEMPLATE_DESCRIPTION_MAX).nullable()
  .openapi({ example: 'Sent when a user asks to reset a password' });

export const CreateTemplateSchema = z.object({
  name: Name,
  description: Description.optional(),
  default_language: LanguageTag.optional(),
}).openapi('CreateTemplate');
export type CreateTemplateInput = z.infer<typeof CreateTemplateSchema>;

export const UpdateTemplateSchema = z.object({
  name: Name.optional(),
  description: Description.optional(),
  default_language: LanguageTag.optional(),
}).openapi('UpdateTemplate');
export type UpdateTemplateInput = z.infer<typeof UpdateTemplateSchema>;

export const CreateVersionSchema = z.object({
  stylesheet_id: StylesheetRef.optional(),
  sample_data: SampleData.optional(),
}).openapi('CreateTemplateVersion');
export type CreateVersionInput = z.infer<typeof CreateVersionSchema>;
export const UpdateVersionSchema = CreateVersionSchema.openapi('UpdateTemplateVersion');
export type UpdateVersionInput = CreateVersionInput;

export const LocalizationSchema = z.object({
  language: LanguageTag,
  subject: text(SUBJECT_MAX).refine((s) => s.trim() !== '', 'must not be empty'),
  html: text(HTML_MAX).nullable().optional(),
  text: text(TEXT_MAX).nullable().optional(),
}).refine((l) => (l.html ?? '') !== '' || (l.text ?? '') !== '', { message: 'needs html or text (or both)', path: ['html'] })
  .openapi('TemplateLocalization');

export const PutLocalizationsSchema = z.object({
  localizations: z.array(LocalizationSchema, requiredOr('must be an array of localizations'))
    .min(1, 'must hold at least one localization')
    .max(LOCALIZATIONS_MAX, `must hold at most ${LOCALIZATIONS_MAX} localizations`)
    .superRefine((list, ctx) => {
      const seen = new Set<string>();
      list.forEach((l, i) => {
        if (seen.has(l.language)) ctx.addIssue({ code: 'custom', message: `language ${l.language} appears more than once`, path: [i, 'language'] });
        seen.add(l.language);
      });
    }),
}).openapi('PutTemplateLocalizations');
export type PutLocalizationsInput = z.infer<typeof PutLocalizationsSchema>;

export const LocalizationRecordSchema = z.object({
  language: z.string().openapi({ example: 'en' }),
  subject: z.string(),
  html: z.string().nullable(),
  text: z.string().nullable(),
}).openapi('TemplateLocalizationRecord');
export type LocalizationRecord = z.infer<typeof LocalizationRecordSchema>;

export const VersionSchema = z.object({
  id: z.string().openapi({ format: 'uuid' }),
  template_id: z.string().openapi({ format: 'uuid' }),
  version: z.number().int().openapi({ example: 3, description: 'One above the highest number the template ever had; never reused' }),
  stylesheet_id: z.string().nullable(),
  sample_data: z.string().nullable(),
  active: z.boolean().openapi({ description: 'Whether sends resolve this version now' }),
  first_activated_at: Timestamp.nullable().openapi({ description: 'Set on first activation; from then on the version and its localizations are frozen' }),
  languages: z.array(z.string()).openapi({ description: 'Languages of its localizations, sorted', example: ['de', 'en'] }),
  created_at: Timestamp,
  updated_at: Timestamp,
}).openapi('TemplateVersion');
export type VersionRecord = z.infer<typeof VersionSchema>;

export const TemplateSchema = z.object({
  id: z.string().openapi({ format: 'uuid' }),
  name: z.string(),
  description: z.string().nullable(),
  default_language: z.string().openapi({ example: 'en' }),
  active_version_id: z.string().nullable(),
  highest_version: z.number().int().openapi({ description: 'The highest version number the template ever had (0 before its first)' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}).openapi('Template');
export type TemplateRecord = z.infer<typeof TemplateSchema>;

export const TemplateWithVersionsSchema = TemplateSchema.extend({
  versions: z.array(VersionSchema).openapi({ description: 'Its versions, newest number first' }),
}).openapi('TemplateWithVersions');

const param = (name: string) => Uuid.openapi({ param: { name, in: 'path' }, example: '0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11' });
export const TemplateParams = z.object({ templateId: param('templateId') });
export const VersionParams = z.object({ templateId: param('templateId'), versionId: param('versionId') });

export const TemplateCursorSchema = keysetCursor('TemplateCursor');
export type TemplateCursor = z.infer<typeof TemplateCursorSchema>;
export const ListTemplatesQuery = keysetQuery('created_at', { max: TEMPLATES_LIMIT_MAX, fallback: TEMPLATES_LIMIT_DEFAULT }, {});
