// Stylesheets a template version names by `stylesheet_id` (docs/templates.md).
import { z } from '@hono/zod-openapi';
import { Timestamp } from './common.js';

export const STYLESHEET_NAME_MAX = 200;
export const CSS_MAX = 100_000;

const requiredOr = (problem: string) => ({ error: (issue: { input?: unknown }) => (issue.input === undefined ? 'required' : problem) });

const Name = z.string(requiredOr('must be a string'))
  .max(STYLESHEET_NAME_MAX, `must be at most ${STYLESHEET_NAME_MAX} characters`)
  .refine((s) => !s.includes('\0'), 'must not contain NUL characters')
  .transform((s) => s.trim())
  .refine((s) => s !== '', 'must not be empty')
  .openapi({ example: 'brand', description: `Unique in the project (409 otherwise), at most ${STYLESHEET_NAME_MAX} characters` });
const Css = z.string(requiredOr('must be a string'))
  .max(CSS_MAX, `must be at most ${CSS_MAX} characters`)
  .refine((s) => !s.includes('\0'), 'must not contain NUL characters')
  .openapi({ example: 'p { color: #333; }', description: `At most ${CSS_MAX} characters` });

export const CreateStylesheetSchema = z.object({ name: Name, css: Css }).openapi('CreateStylesheet');
export type CreateStylesheetInput = z.infer<typeof CreateStylesheetSchema>;
export const UpdateStylesheetSchema = z.object({ name: Name.optional(), css: Css.optional() }).openapi('UpdateStylesheet');
export type UpdateStylesheetInput = z.infer<typeof UpdateStylesheetSchema>;

export const StylesheetSchema = z.object({
  id: z.string().openapi({ format: 'uuid' }),
  name: z.string(),
  css: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
}).openapi('Stylesheet');
export type StylesheetRecord = z.infer<typeof StylesheetSchema>;
