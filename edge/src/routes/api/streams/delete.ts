import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { StreamNameParams } from '../../../contracts/stream.js';
import { deleteStream } from '../../../services/streams/delete.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/streams/{name}',
  permission: 'emails:write',
  summary: 'Delete a message stream',
  description: 'A project stream only (a built-in one is 400). Sends naming it are refused from then on; mail sent on it keeps its stream in the log, and its suppressions stay.',
  tags: ['Streams'],
  request: { params: StreamNameParams },
  errors: [404],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await deleteStream(c.get('db'), c.get('projectId'), c.req.valid('param').name);
  return c.body(null, 204);
};
