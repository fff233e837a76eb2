import { type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { DeadLettersSchema } from '../../../contracts/admin.js';
import { IdParams } from '../../../contracts/common.js';
import { relayNodeDeadLetters } from '../../../services/relay-nodes/dead-letters.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/relay-nodes/{id}/dead-letters',
  permission: 'platform:admin',
  summary: 'A relay node\'s dead letters',
  description: [
    'What the edge knows of the messages a relay node gave up on (the edge refused them for good): their number and bytes as the node\'s last heartbeat reported them, and when.',
    'The messages themselves never leave the node: they stay in its `<spool>/dead/`, each with a `<id>.reason.txt`, read on that machine with `edgemail relay dead-letters` (id, size, when moved, reason; docs/inbound.md "Dead letters"). An unknown node is 404.',
  ].join(' '),
  request: { params: IdParams },
  errors: [404],
  responses: { 200: { description: 'The node\'s dead letters as last reported', content: { 'application/json': { schema: DeadLettersSchema } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json(await relayNodeDeadLetters(c.get('db'), c.req.valid('param').id), 200);
