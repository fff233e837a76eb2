import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { InboundSpamSettingsSchema, PutInboundSpamSettingsSchema } from '../../../contracts/inbound-spam.js';
import { setInboundSpamSettings } from '../../../services/projects/inbound-spam.js';

export const route = defineRoute({
  method: 'put',
  path: '/api/v1/project/inbound-spam',
  permission: 'inbound:write',
  auditType: 'project.inbound_spam_update',
  summary: 'Set the project\'s inbound spam thresholds',
  description: [
    'Sets both thresholds on rspamd\'s score (docs/inbound.md, "Spam scoring"); null turns one off. `reject_score`: relay nodes answer mail at or above it `550 5.7.1` after DATA; the message is stored first, so its record is kept with status `rejected` (as for a DMARC `p=reject` failure). Nodes learn it with their domain list, within about 30 s (their next heartbeat sees the list changed).',
    '`mark_score`: a record at or above it carries `spam.marked: true`, in the API and in `inbound.received`; it must not be above `reject_score` (400 naming `mark_score`). Mail already stored keeps its mark. Without rspamd on the node, mail is unscored (`spam: null`) and neither applies.',
  ].join('\n\n'),
  tags: ['Project'],
  request: { body: { required: true, content: { 'application/json': { schema: PutInboundSpamSettingsSchema } } } },
  responses: { 200: { description: 'The thresholds as stored', content: { 'application/json': { schema: InboundSpamSettingsSchema } } } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await setInboundSpamSettings(c.get('db'), c.get('projectId'), c.req.valid('json')), 200);
