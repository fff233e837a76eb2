// A person's live sessions as `GET /app/api/account/sessions` lists them
// (docs/console.md "Your sessions"): the row id, never the token.
import { z } from '@hono/zod-openapi';
import { Timestamp, Uuid } from './common.js';

export const LiveSessionSchema = z.object({
  id: Uuid.openapi({ description: 'The session\'s id (what `DELETE /app/api/account/sessions/{id}` takes); never its token.' }),
  method: z.enum(['password', 'passkey', 'oidc']).openapi({ description: 'How it was signed in.' }),
  created_at: Timestamp.openapi({ description: 'When it was signed in.' }),
  last_seen_at: Timestamp.openapi({ description: 'Its last request, exact to the minute.' }),
  expires_at: Timestamp.openapi({ description: 'Its absolute expiry (the idle one is `last_seen_at` plus `console.session_idle_timeout`).' }),
  client_ip: z.string().nullable().openapi({ description: 'The address it signed in from.' }),
  user_agent: z.string().nullable().openapi({ description: 'The User-Agent it signed in with (at most 512 characters).' }),
  current: z.boolean().openapi({ description: 'True for the session making this request.' }),
}).openapi('LiveSession');

export const LiveSessionListSchema = z.object({ sessions: z.array(LiveSessionSchema) }).openapi('LiveSessionList');
