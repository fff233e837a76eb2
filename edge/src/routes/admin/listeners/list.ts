import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { ListenerSchema } from '../../../contracts/listener.js';
import { listListeners } from '../../../services/certificates/assignments.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/listeners',
  permission: 'platform:admin',
  summary: 'List the SMTP listeners and their TLS',
  description: 'The relay nodes\' SMTP listeners (`inbound`, `submission`): TLS on or off, the certificate assigned to each, what a handshake presents (assigned, then ACME for `acme.hosts`, then the shared self-signed pair; nothing with TLS off), and what each installation-wide relay node last reported for it in its heartbeat.',
  tags: ['Admin'],
  responses: {
    200: { description: 'Every listener', content: { 'application/json': { schema: z.object({ listeners: z.array(ListenerSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ listeners: await listListeners(c.get('db'), c.get('config')) }, 200);
