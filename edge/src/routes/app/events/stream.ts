import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { badRequest, forbidden } from '../../../http/errors.js';
import { lastEventId } from '../../../services/event-stream/sse.js';
import { visibleEventNames } from '../../../services/event-stream/events.js';
import { openEventStream } from '../../../services/event-stream/open.js';
import { MAX_STREAMS, MAX_STREAMS_PER_SESSION, RETAIN_EVENTS } from '../../../services/event-stream/limits.js';

export const route = defineRoute({
  method: 'get',
  path: '/app/api/events',
  // Any one of the four kinds' read permissions opens the stream; each kind is then sent only to members who may read it.
  permission: 'emails:read',
  alsoGrantedBy: ['inbound:read', 'webhooks:read', 'audit:read'],
  summary: 'Follow the project\'s events live (Server-Sent Events)',
  description: [
    'A `text/event-stream` of the signed-in member\'s current project (the session\'s current project, else the user\'s default; `X-Service-Project-Id` picks another the user belongs to).',
    'Events: `inbound.received` (needs `inbound:read`), `email.status` (`email.sent`, `email.failed`, `email.bounced`, `email.complained`; needs `emails:read`), `webhook.delivery` (each attempt\'s result; needs `webhooks:read`) and `audit` (the project\'s audit events; admin or owner role).',
    'Each `data:` is `{"type", "at", "data"}` with the same metadata as the webhook envelope: never a message body. Each event has an increasing `id:`;',
    `send it back as \`Last-Event-ID\` (EventSource does) or \`?last_event_id=\` to get exactly the events after it. The stream keeps the last ${RETAIN_EVENTS} events (at most 24 hours);`,
    'a resume from before that gets one `reset` event (reload the lists, then follow).',
    'The session is re-checked every `console.events_session_check` (5 s by default): once it is signed out, expired or no longer a member, the stream gets an `end` event and closes.',
    'The same check reads the member\'s current role and group: the stream goes on with only the kinds they may see now (an admin demoted to member gets no further `audit` event; a promotion adds kinds), and ends with an `end` event when no kind is left.',
    `Browser sessions only: an API key or platform credential is refused with 403. At most ${MAX_STREAMS_PER_SESSION} open streams per session (a newer one ends the oldest with an \`end\` event) and ${MAX_STREAMS} per project (429).`,
  ].join(' '),
  tags: ['Console'],
  request: {
    headers: z.object({
      'last-event-id': z.string().optional().openapi({ description: 'The id of the last event received; the stream resumes after it' }),
    }),
    query: z.object({
      last_event_id: z.string().optional().openapi({ description: 'The same, for clients that cannot set headers; the header wins when both are sent' }),
    }),
  },
  responses: {
    200: {
      description: 'The event stream, open until the client leaves or the session ends',
      content: { 'text/event-stream': { schema: z.string().openapi({ example: 'id: 42\nevent: inbound.received\ndata: {"type":"inbound.received","at":"2026-11-26T17:00:00.000Z","data":{"id":"…","sender":"ann@example.org","subject":"Hello"}}\n\n' }) } },
    },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const principal = c.get('principal');
  // The console surface takes browser sessions only (spec, "Console surface"), whatever guard runs before.
  if (principal.kind !== 'session' || !principal.membership) throw forbidden('the event stream is for signed-in browser sessions: API keys and platform credentials are not accepted on /app/api');
  const after = lastEventId(c.req.header('last-event-id'), c.req.valid('query').last_event_id);
  if (typeof after === 'object') throw badRequest(after.problem);
  return openEventStream(c.env, {
    projectId: c.get('projectId'),
    sessionId: principal.id,
    names: visibleEventNames(principal.membership),
    after,
  });
};
