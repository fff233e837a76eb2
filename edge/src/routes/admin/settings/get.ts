import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { SettingsListSchema } from '../../../contracts/settings.js';
import { listSettings } from '../../../services/settings/read.js';
import { settingsOf } from '../../../settings.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/settings',
  permission: 'platform:admin',
  summary: 'Read the installation settings',
  description: 'Every setting with its effective value, its source (`default`, `environment`, or `runtime` for an override set through PATCH) and whether it can be changed at run time (docs/settings.md). Secrets (the database URL, the encryption key) are never shown: `"<redacted>"` when set, `null` when not. A platform credential only: project keys and sessions are refused with 403.',
  tags: ['Admin'],
  responses: { 200: { description: 'The effective settings', content: { 'application/json': { schema: SettingsListSchema } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ settings: await listSettings(c.get('db'), c.env, settingsOf(c.env).config) }, 200);
