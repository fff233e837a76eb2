import { z } from '@hono/zod-openapi';

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
}).openapi('SsoPolicy');

export const UpdateSsoPolicySchema = z.object({ required: z.boolean() }).strict().openapi('UpdateSsoPolicy');
