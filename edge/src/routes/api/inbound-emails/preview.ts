import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { previewResponse } from '../../../http/mail-preview.js';
import { IdParams } from '../../../contracts/common.js';
import { getInboundEmail } from '../../../services/inbound-emails/get.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/inbound-emails/{id}/preview',
  permission: 'inbound:read',
  summary: 'Preview the HTML of an inbound email',
  description: 'The parsed HTML part as a page of its own, for a sandboxed iframe (the console shows inbound HTML only this way). '
    + 'Its `Content-Security-Policy` runs no script (`sandbox` without `allow-scripts`), lets it be framed only by this origin, and loads nothing from any host: '
    + '`images=remote` (asked by the reader) allows http(s) images and nothing else. A message without HTML is an empty page.',
  tags: ['Inbound email'],
  request: {
    params: IdParams,
    query: z.object({
      images: z.enum(['blocked', 'remote']).default('blocked').openapi({ description: '`remote` loads the message\'s http(s) images (each one tells its sender the message was opened)' }),
    }),
  },
  errors: [404],
  responses: {
    200: { description: 'The HTML', content: { 'text/html': { schema: z.string() } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const email = await getInboundEmail(c.get('db'), c.get('projectId'), id);
  return previewResponse(email.html_body, c.req.valid('query').images);
};
