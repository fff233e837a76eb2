import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineUnsubscribeRoute } from '../../http/define-unsubscribe-route.js';
import { OneClickBody, UnsubscribedSchema, UnsubscribeParams } from '../../contracts/unsubscribe.js';
import { applyUnsubscribe, checkHttpsToken } from '../../services/unsubscribe/apply.js';
import { donePage, pageHeaders } from '../../services/unsubscribe/page.js';
import { handOverOutbox } from '../../services/webhook-outbox/hand-over.js';
import type { AppEnv } from '../../env.js';

export const route = defineUnsubscribeRoute({
  method: 'post',
  path: '/unsubscribe/{token}',
  summary: 'One-click unsubscribe (RFC 8058)',
  description: 'What a mailbox provider POSTs when its user clicks Unsubscribe, and what the confirmation page\'s button posts: the body `List-Unsubscribe=One-Click` (form-encoded or multipart). At once the message\'s recipient is suppressed for the message\'s stream (reason `unsubscribe`; mail on other streams still goes), the unsubscribe is counted (docs/analytics.md), `email.unsubscribed` fires and the project\'s audit log records it. Posting again answers the same and changes nothing more. A token that is not ours (forged, altered, another email\'s or project\'s) is 404, an expired one 410; neither changes anything. Answers JSON when the request accepts `application/json`, else a small HTML page.',
  tags: ['Unsubscribe'],
  request: {
    params: UnsubscribeParams,
    body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: OneClickBody }, 'multipart/form-data': { schema: OneClickBody } } },
  },
  responses: {
    200: { description: 'Unsubscribed (now or before)', content: { 'application/json': { schema: UnsubscribedSchema }, 'text/html': { schema: z.string() } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const db = c.get('db');
  const verdict = await checkHttpsToken(db, c.get('config'), c.req.valid('param').token);
  if (!verdict.ok) {
    return verdict.kind === 'expired'
      ? c.json({ error: 'this unsubscribe link has expired (sending.unsubscribe_link_ttl); nothing changed' }, 410)
      : c.json({ error: 'not a valid unsubscribe link; nothing changed' }, 404);
  }
  const u = verdict.unsubscribe;
  // The path without its token: audit rows are read by project admins, and the token is the recipient's.
  const { events } = await applyUnsubscribe(db, u, 'one_click', { clientIp: c.get('clientIp') ?? null, path: '/unsubscribe/{token}' });
  for (const [projectId, ids] of events) c.executionCtx.waitUntil(handOverOutbox(c.env, projectId, ids));
  if ((c.req.header('accept') ?? '').includes('application/json')) return c.json({ unsubscribed: true as const, stream: u.stream }, 200);
  return c.body(donePage(u.shownAddress, u.stream), 200, pageHeaders);
};
