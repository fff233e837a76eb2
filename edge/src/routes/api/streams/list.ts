import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { StreamSchema } from '../../../contracts/stream.js';
import { listStreams } from '../../../services/streams/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/streams',
  permission: 'emails:read',
  summary: 'List message streams',
  description: 'The built-in `transactional` and `broadcast` streams, then the project\'s own by name (docs/sending.md, "Streams"). A send names its stream with `stream`; a suppression may hold for one stream only.',
  tags: ['Streams'],
  responses: {
    200: { description: 'The streams', content: { 'application/json': { schema: z.object({ streams: z.array(StreamSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ streams: await listStreams(c.get('db'), c.get('projectId')) }, 200);
