// Account security events as read back: a person's own trail
// (`GET /app/api/account/security-events`) and the platform admin's view of
// every account's (`GET /api/v1/admin/security-events`), docs/audit.md.
import { z } from '@hono/zod-openapi';
import { Timestamp, Uuid } from './common.js';

const ownFields = {
  id: Uuid,
  type: z.string().openapi({ example: 'auth.login.failed' }),
  detail: z.string().nullable().openapi({ description: 'How or why: which leg of a refused sign-in failed (`password`, `totp`, `locked`, …), the provider of an SSO event; null when the type says it all.', example: 'password' }),
  client_ip: z.string().nullable().openapi({ description: 'The client address the request came from.' }),
  user_agent: z.string().nullable().openapi({ description: 'The User-Agent the request sent (at most 512 characters); null when it sent none.' }),
  created_at: Timestamp,
};

export const SecurityEventSchema = z.object(ownFields).openapi('SecurityEvent');

export const AdminSecurityEventSchema = z.object({
  ...ownFields,
  user_id: Uuid.nullable().openapi({ description: 'The account (`actor_id`): a user, or the platform credential that made an administration change; null for a sign-in refused for an unknown email.' }),
  actor_email: z.string().nullable().openapi({ description: 'The user\'s email, the email tried, or `admin api key <name>`.' }),
  method: z.string().nullable(),
  path: z.string().nullable(),
  status: z.number().int().nullable().openapi({ description: 'The HTTP status answered (a refused sign-in: 401).' }),
}).openapi('AdminSecurityEvent');

export const SecurityEventType = z.string().min(1).max(100).regex(/^[a-z0-9_.]+$/, 'must be an event type such as auth.login.failed')
  .openapi({ param: { name: 'type', in: 'query' }, example: 'auth.login.failed' });
