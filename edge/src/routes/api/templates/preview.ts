import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { PreviewResultSchema, PreviewSchema, TemplateVersionParams } from '../../../contracts/template-render.js';
import { renderVersion } from '../../../services/templates/render-version.js';
import { renderLimits } from '../../../services/templates/render.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/templates/{templateId}/versions/{versionId}/preview',
  permission: 'templates:read',
  summary: 'Preview a template version',
  description: [
    'Renders one localization of the version (any version: a draft, the active one, an old one) with `data`, or the version\'s `sample_data` when no data is given, and answers subject, html and text; nothing is sent or stored.',
    'Mustache templates: `{{name}}` is HTML-escaped in `html` and taken as it is in `subject` and `text`; `{{{name}}}` is never escaped. The stylesheet the version names is put in a `<style>` element at the start of `<head>`.',
    'Language: the requested tag, else its primary subtag (`pt-BR` → `pt`), else the template\'s `default_language`; the answer says which (`language`). A `language` that is not a BCP 47 tag is 400.',
    '422 naming the problem: a variable the data lacks (`missing variable: user.name (in html)`), a template that does not parse, a partial, no localization to fall back to, a `sample_data` that is not a JSON object, a rendered subject with CR or LF. Another project\'s or an unknown template or version: 404.',
    'Every render is bounded, and stops as it crosses a bound, with 422 naming it: sections nested deeper than `templates.max_nesting_depth` (8), more than `templates.max_render_steps` steps (100000: text, variables and sections visited, and list items rendered, over subject, html and text together; `template render exceeds 100000 steps (templates.max_render_steps)`), more than `templates.max_rendered_bytes` of output (1 MiB, the stylesheet included). The same bounds hold for send-test and sends by template.',
    'Needs `templates:read`: it reads the template and changes nothing.',
  ].join(' '),
  tags: ['Templates'],
  request: {
    params: TemplateVersionParams,
    body: { required: false, content: { 'application/json': { schema: PreviewSchema } } },
  },
  errors: [404, 422],
  responses: {
    200: { description: 'The rendered parts', content: { 'application/json': { schema: PreviewResultSchema } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { templateId, versionId } = c.req.valid('param');
  const body = c.req.valid('json') ?? {};
  const out = await renderVersion(c.get('db'), c.get('projectId'), { templateId, versionId, language: body.language, data: body.data, limits: renderLimits(c.get('config')) });
  return c.json({ subject: out.subject, html: out.html, text: out.text, language: out.language, version: out.version }, 200);
};
