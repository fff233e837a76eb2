import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { actorName } from '../../../middleware/principal.js';
import { UpdateSettingsSchema, UpdatedSettingsSchema } from '../../../contracts/settings.js';
import { listSettings } from '../../../services/settings/read.js';
import { updateSettings } from '../../../services/settings/update.js';
import { settingsOf } from '../../../settings.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'patch',
  path: '/api/v1/admin/settings',
  permission: 'platform:admin',
  summary: 'Change installation settings at run time',
  description: 'Overrides settings over the environment\'s values, only those marked `runtime_changeable` (docs/settings.md: rate limits, CORS origins, console session and link periods, per-project caps, retention); `null` removes an override. Every isolate applies a change within 10 s. Refused with 400, nothing stored, when any name is unknown, needs the environment and a restart, or has a value its setting\'s check refuses (the message and `fields` name each). Written to the acting credential\'s security trail as `settings.updated` with the names, never the values. A platform credential only: project keys and sessions are refused with 403.',
  tags: ['Admin'],
  auditType: null, // written by the service, with the names in `detail`, in the change's transaction
  request: { body: { required: true, content: { 'application/json': { schema: UpdateSettingsSchema } } } },
  responses: { 200: { description: 'Changed; the effective settings after it', content: { 'application/json': { schema: UpdatedSettingsSchema } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const principal = c.get('principal');
  const db = c.get('db');
  const changed = await updateSettings(db, c.req.valid('json'), {
    id: principal.kind === 'session' ? principal.userId : principal.id,
    name: actorName(principal),
    clientIp: c.get('clientIp'),
    method: c.req.method,
    path: c.req.path,
  });
  return c.json({ ...changed, settings: await listSettings(db, c.env, settingsOf(c.env).config) }, 200);
};
