import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { previewResponse } from '../../../http/mail-preview.js';
import { RenderLanguage, TemplateVersionParams } from '../../../contracts/template-render.js';
import { renderVersion } from '../../../services/templates/render-version.js';
import { renderLimits } from '../../../services/templates/render.js';
import { invalid } from '../../../services/errors.js';

/** The data travels in the URL (the frame's `src`), so it is kept well under the URL limits of browsers and proxies. */
const MAX_DATA_CHARS = 8000;

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/templates/{templateId}/versions/{versionId}/preview/html',
  permission: 'templates:read',
  summary: 'Preview a template version\'s HTML as a page',
  description: [
    'The HTML part of one localization of the version, rendered as `POST …/preview` renders it (the same language fallback, data, bounds and refusals: 400, 404, 422 as JSON),',
    'answered as a page of its own for a sandboxed iframe (the console\'s template editor shows its live preview this way).',
    'Its `Content-Security-Policy` is the email preview\'s: the message\'s own `<style>` and `style=""` apply, no script runs (`sandbox` without `allow-scripts`),',
    'nothing is loaded from any host (images only as `data:` URIs), and only this origin may frame it. A localization without HTML is an empty page.',
    '`data` is the render\'s data as a JSON object in the query (at most 8000 characters); without it the version\'s `sample_data`.',
    'Nothing is sent or stored; needs `templates:read`.',
  ].join(' '),
  tags: ['Templates'],
  request: {
    params: TemplateVersionParams,
    query: z.object({
      language: RenderLanguage.optional(),
      data: z.string().max(MAX_DATA_CHARS, `must be at most ${MAX_DATA_CHARS} characters`).optional()
        .openapi({ description: 'The data as a JSON object (`{"name":"Ada"}`), URL-encoded; defaults to the version\'s `sample_data`', example: '{"name":"Ada"}' }),
    }),
  },
  errors: [404, 422],
  responses: {
    200: { description: 'The rendered HTML', content: { 'text/html': { schema: z.string() } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { templateId, versionId } = c.req.valid('param');
  const query = c.req.valid('query');
  const rendered = await renderVersion(c.get('db'), c.get('projectId'), {
    templateId, versionId, language: query.language, data: query.data === undefined ? undefined : dataOf(query.data), limits: renderLimits(c.get('config')),
  });
  return previewResponse(rendered.html ?? '', 'blocked');
};

function dataOf(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid('data must be a JSON object (URL-encoded JSON)', { data: 'not valid JSON' });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid('data must be a JSON object', { data: 'must be a JSON object' });
  return parsed as Record<string, unknown>;
}
