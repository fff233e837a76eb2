import { z } from '@hono/zod-openapi';
import { Uuid } from './common.js';

export const SettingSchema = z.object({
  name: z.string().openapi({ example: 'ratelimit.api_per_minute' }),
  value: z.unknown().openapi({ description: 'The effective value as JSON (durations in milliseconds); a secret shows `"<redacted>"` when set and `null` when not.' }),
  source: z.enum(['default', 'environment', 'runtime']).openapi({ description: '`runtime`: an override set through PATCH /api/v1/admin/settings, over the environment.' }),
  runtime_changeable: z.boolean().openapi({ description: 'Whether PATCH /api/v1/admin/settings may change it; the others need the environment and a restart.' }),
  secret: z.boolean(),
  description: z.string(),
}).openapi('Setting');

export const SettingsListSchema = z.object({ settings: z.array(SettingSchema) }).openapi('Settings');

export const UpdateSettingsSchema = z.record(z.string(), z.unknown()).openapi('UpdateSettings', {
  description: 'Setting name → new value (JSON, or the text form the environment takes: `"30s"`, `"a,b"`); `null` removes the override.',
  example: { 'ratelimit.api_per_minute': 600, 'cors.allowed_origins': ['https://console.example.com'], 'audit_log_retention_days': null },
});

export const UpdatedSettingsSchema = z.object({
  set: z.array(z.string()),
  removed: z.array(z.string()),
  settings: z.array(SettingSchema),
}).openapi('UpdatedSettings');

export const SsoPolicySchema = z.object({
  required: z.boolean().openapi({ description: 'Members must sign in through single sign-on (OIDC).' }),
  provider_ids: z.array(z.string().uuid()).openapi({ description: 'The identity providers whose sessions the policy accepts; a session opened through any other provider is refused as a password session is. Deleted providers drop out of the list.' }),
}).openapi('SsoPolicy');

export const UpdateSsoPolicySchema = z.object({
  required: z.boolean(),
  provider_ids: z.array(Uuid).max(100, 'at most 100 identity providers').optional().openapi({
    description: 'The identity providers the policy accepts: existing, enabled ones (400 naming `provider_ids` otherwise), each once. Omitted: the stored list, or, when the request turns single sign-on on, the provider of the requesting session. When required, it must hold the provider of the requesting session (409 otherwise: the owner would lock themselves out).',
  }),
}).strict().openapi('UpdateSsoPolicy');
