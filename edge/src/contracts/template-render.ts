// The bodies of the routes that render a template: preview and send-test
// (docs/template-rendering.md); the send routes' template fields are in send.ts.
import { z } from '@hono/zod-openapi';
import { Uuid } from './common.js';

/** The data a template renders with: a JSON object (mustache's names are its keys). */
export const TemplateData = z.record(z.string(), z.unknown(), { error: 'must be a JSON object' })
  .openapi({ type: 'object', additionalProperties: true, example: { name: 'Ada', reset_url: 'https://example.org/r/1' }, description: 'The values the template\'s `{{names}}` read; every variable the rendered parts use must be present (`null` renders empty), or the answer is 422 `missing variable: <name>`. Defaults to the version\'s `sample_data`.' });

/** A requested language: checked by the render (400 when not BCP 47), so the fallback can say which it used. */
export const RenderLanguage = z.string().max(100, 'must be at most 100 characters')
  .openapi({ example: 'pt-BR', description: 'BCP 47 tag; the localization used is this tag, else its primary language (`pt-BR` → `pt`), else the template\'s `default_language`. Not a tag: 400.' });

export const TemplateVersionParams = z.object({
  templateId: Uuid.openapi({ param: { name: 'templateId', in: 'path' }, example: '0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11' }),
  versionId: Uuid.openapi({ param: { name: 'versionId', in: 'path' }, example: '5c2b0e8e-0f36-4f7d-8a51-7b1f0b0a6e21' }),
});

export const TemplateParams = z.object({
  templateId: Uuid.openapi({ param: { name: 'templateId', in: 'path' }, example: '0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11' }),
});

export const PreviewSchema = z.object({
  data: TemplateData.optional(),
  language: RenderLanguage.optional(),
}).strict().openapi('TemplatePreviewRequest');

export const PreviewResultSchema = z.object({
  subject: z.string(),
  html: z.string().nullable().openapi({ description: 'Escaped where the template did not ask otherwise (`{{{ }}}`), with the stylesheet in `<head>`; null when the localization has no HTML' }),
  text: z.string().nullable(),
  language: z.string().openapi({ description: 'The localization rendered, after the fallback', example: 'pt' }),
  version: z.number().int().openapi({ description: 'The version\'s number' }),
}).openapi('TemplatePreview');
