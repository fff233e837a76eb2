import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { previewResponse } from '../../../http/mail-preview.js';
import { IdParams } from '../../../contracts/common.js';
import { getEmail } from '../../../services/emails/get.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/emails/{id}/preview',
  permission: 'emails:read',
  summary: 'Preview the HTML of an email',
  description: 'The message\'s HTML as a page of its own, for a sandboxed iframe (the console\'s rendered preview). '
    + 'Its `Content-Security-Policy` runs no script, lets it be framed only by this origin and loads nothing from any host unless `images=remote`. '
    + 'A message without HTML is an empty page.',
  tags: ['Emails'],
  request: {
    params: IdParams,
    query: z.object({
      images: z.enum(['blocked', 'remote']).default('blocked').openapi({ description: '`remote` loads the message\'s http(s) images' }),
    }),
  },
  errors: [404],
  responses: {
    200: { description: 'The HTML', content: { 'text/html': { schema: z.string() } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const email = await getEmail(c.get('db'), c.get('projectId'), c.req.valid('param').id);
  return previewResponse(email.html ?? '', c.req.valid('query').images);
};
