import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { InboundSpamSettingsSchema } from '../../../contracts/inbound-spam.js';
import { inboundSpamSettings } from '../../../services/projects/inbound-spam.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/project/inbound-spam',
  permission: 'inbound:read',
  summary: 'Read the project\'s inbound spam thresholds',
  description: 'The rspamd scores at which the project\'s inbound mail is refused at DATA (`reject_score`) or marked (`mark_score`); null when off (docs/inbound.md, "Spam scoring"). They apply where relay nodes ask rspamd (`relay_node.inbound.spam.rspamd_url`).',
  tags: ['Project'],
  responses: { 200: { description: 'The thresholds', content: { 'application/json': { schema: InboundSpamSettingsSchema } } } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await inboundSpamSettings(c.get('db'), c.get('projectId')), 200);
