import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { CreateStreamSchema, StreamSchema } from '../../../contracts/stream.js';
import { createStream } from '../../../services/streams/create.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/streams',
  permission: 'emails:write',
  summary: 'Create a message stream',
  description: 'A project stream (as Postmark\'s message streams): `name` (lower-case letters, digits, `-`, `_`; 1 to 32; not a built-in name) and `kind`, `transactional` or `broadcast`, whose rules it follows (broadcast: one-click unsubscribe on every message, DMARC required of the from-domain). Sends name it with `stream`; suppressions and analytics count it apart. A name taken is 409.',
  tags: ['Streams'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateStreamSchema } } } },
  errors: [409],
  responses: {
    201: { description: 'Stream created', content: { 'application/json': { schema: z.object({ stream: StreamSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ stream: await createStream(c.get('db'), c.get('projectId'), c.req.valid('json')) }, 201);
