import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import type { ProjectEnv } from '../../../http/define-route.js';
import { EnrollAnswerSchema, EnrollSchema } from '../../../contracts/relay.js';
import { enrollRelayNode } from '../../../services/relay-nodes/enroll.js';

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/enroll',
  credential: 'enrolment',
  bodyLimit: () => CHATTER_BODY_BYTES,
  auditType: 'relay_node.enrolled',
  summary: 'Enrol a relay node',
  description: 'Takes a project API key holding `relay:write`; the node belongs to that project. The `myr_` token is returned in this response only; the service keeps its SHA-256 hash. A project holds at most `relay_nodes.max_per_project` unrevoked nodes: one more is 400, naming the limit.',
  tags: ['Relay'],
  request: { body: { required: true, content: { 'application/json': { schema: EnrollSchema } } } },
  responses: {
    201: {
      description: 'Node enrolled',
      content: { 'application/json': { schema: EnrollAnswerSchema } },
    },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await enrollRelayNode(c.get('db'), c.get('projectId'), c.req.valid('json'), c.get('config')['relay_nodes.max_per_project']), 201);
