import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineTrackingRoute } from '../../http/define-tracking-route.js';
import { errorBody } from '../../http/errors.js';
import { trackHit } from '../../services/tracking/hit.js';
import type { AppEnv } from '../../env.js';

export const route = defineTrackingRoute({
  method: 'get',
  path: '/t/c/{token}',
  summary: 'Tracked link',
  description: 'Where a tracked message\'s links point (docs/tracking.md). Redirects (302) to the URL that was in that message, read from the signed token (which binds the email, the link\'s index and its URL): never to any other, so it is no open redirect. Records `email.clicked` with the link, the user agent class and whether it looks like a machine (a security scanner or link checker, a HEAD request, a click within `tracking.machine_window` of delivery). The event is written in a batch after the answer. A token this installation did not sign (altered, forged, or a link of another email) is 404, redirects nowhere and records nothing. Counted per client address in `ratelimit.tracking_per_minute`, in the isolate.',
  tags: ['Tracking'],
  request: { params: z.object({ token: z.string().openapi({ description: 'The signed token from the message' }) }) },
  responses: {
    302: { description: 'To the link\'s URL (`Location`)' },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const claim = await trackHit(
    { env: c.env, db: c.get('db'), config: c.get('config'), waitUntil: (p) => c.executionCtx.waitUntil(p) },
    { kind: 'click', token: c.req.valid('param').token, method: c.req.method, userAgent: c.req.header('user-agent'), clientIp: c.get('clientIp') },
  );
  if (!claim) return c.json(errorBody('tracking link not found'), 404);
  // The Location is the token's URL alone (checked http(s) again in verifyToken); the referrer of the message stays ours.
  return c.body(null, 302, { Location: claim.url, 'Cache-Control': 'no-store, max-age=0', 'Referrer-Policy': 'no-referrer' });
};
