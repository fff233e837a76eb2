import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { HTML_MAX, LocalizationRecordSchema, LOCALIZATIONS_MAX, PutLocalizationsSchema, SUBJECT_MAX, TEXT_MAX, VersionParams } from '../../../contracts/template.js';
import { putLocalizations } from '../../../services/templates/localizations.js';

export const route = defineRoute({
  method: 'put',
  path: '/api/v1/templates/{templateId}/versions/{versionId}/localizations',
  permission: 'templates:write',
  summary: 'Replace a draft version\'s localizations',
  description: [
    `The body's \`localizations\` replace the version's whole set in one statement (a failure leaves the old set). Each has \`language\` (a BCP 47 tag, stored canonical: \`EN-us\` becomes \`en-US\`; unique in the set), \`subject\` (at most ${SUBJECT_MAX} characters) and \`html\` (at most ${HTML_MAX} characters) or \`text\` (at most ${TEXT_MAX}) or both. 1 to ${LOCALIZATIONS_MAX} localizations; the whole body is also bounded by \`server.max_body_bytes\` (413).`,
    'A version that is or ever was active is frozen: 409 `version <n> was activated and cannot be changed; create a new version`.',
    'A subject, html or text nesting sections (`{{#a}}{{#b}}…`) deeper than `templates.max_nesting_depth` (8 by default) is 422 naming it (`localizations.0.html nests sections more than 8 deep (templates.max_nesting_depth)`), and nothing is written. Renders are bounded too (steps, bytes): see the preview route.',
  ].join('\n\n'),
  tags: ['Templates'],
  request: { params: VersionParams, body: { required: true, content: { 'application/json': { schema: PutLocalizationsSchema } } } },
  errors: [404, 409, 422],
  responses: {
    200: { description: 'The stored set, sorted by language', content: { 'application/json': { schema: z.object({ localizations: z.array(LocalizationRecordSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { templateId, versionId } = c.req.valid('param');
  return c.json(await putLocalizations(c.get('db'), c.get('projectId'), templateId, versionId, c.req.valid('json'), c.get('config')['templates.max_nesting_depth']), 200);
};
