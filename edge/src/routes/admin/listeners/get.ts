import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { ListenerParams, ListenerSchema } from '../../../contracts/listener.js';
import { getListener } from '../../../services/certificates/assignments.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/listeners/{listener}',
  permission: 'platform:admin',
  summary: 'Get one SMTP listener and its TLS',
  description: 'One listener as the list shows it. A name other than `inbound` or `submission` is 404 `listener not found`.',
  tags: ['Admin'],
  request: { params: ListenerParams },
  errors: [404],
  responses: {
    200: { description: 'The listener', content: { 'application/json': { schema: z.object({ listener: ListenerSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ listener: await getListener(c.get('db'), c.get('config'), c.req.valid('param').listener) }, 200);
