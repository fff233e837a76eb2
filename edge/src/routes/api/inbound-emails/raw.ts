import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { downloadHeaders } from '../../../http/download.js';
import { IdParams } from '../../../contracts/common.js';
import { openRawMessage } from '../../../services/inbound-emails/raw.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/inbound-emails/{id}/raw',
  permission: 'inbound:read',
  summary: 'Download the raw message',
  description: 'The message bytes as received (line endings normalised to CRLF), as `<id>.eml`. 404 when the raw bytes were not stored.',
  tags: ['Inbound email'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: {
      description: 'The raw message',
      content: { 'message/rfc822': { schema: z.string().openapi({ format: 'binary' }) } },
    },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const object = await openRawMessage(c.get('db'), c.env.MAIL_STORE, c.get('projectId'), id);
  return new Response(object.body, {
    status: 200,
    headers: {
      'Content-Type': 'message/rfc822',
      'Content-Disposition': `attachment; filename="${id}.eml"`,
      'Content-Length': String(object.size),
      ...downloadHeaders,
    },
  });
};
