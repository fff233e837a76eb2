import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineTrackingRoute } from '../../http/define-tracking-route.js';
import { errorBody } from '../../http/errors.js';
import { PIXEL, trackHit } from '../../services/tracking/hit.js';
import type { AppEnv } from '../../env.js';

export const route = defineTrackingRoute({
  method: 'get',
  path: '/t/o/{token}',
  summary: 'Open pixel',
  description: 'The 1×1 image appended to a tracked message\'s HTML (docs/tracking.md). Answers a transparent GIF (`Cache-Control: no-store`) and records `email.opened` for the email the signed token names, with the user agent class and whether it looks like a machine (Apple Mail Privacy Protection, a security scanner, a HEAD request, a fetch within `tracking.machine_window` of delivery). The event is written in a batch after the answer. A token this installation did not sign is 404 and records nothing. Counted per client address in `ratelimit.tracking_per_minute`, in the isolate.',
  tags: ['Tracking'],
  request: { params: z.object({ token: z.string().openapi({ description: 'The signed token from the message' }) }) },
  responses: {
    200: { description: 'The pixel', content: { 'image/gif': { schema: z.string().openapi({ format: 'binary' }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const claim = await trackHit(
    { env: c.env, db: c.get('db'), config: c.get('config'), waitUntil: (p) => c.executionCtx.waitUntil(p) },
    { kind: 'open', token: c.req.valid('param').token, method: c.req.method, userAgent: c.req.header('user-agent'), clientIp: c.get('clientIp') },
  );
  if (!claim) return c.json(errorBody('tracking link not found'), 404);
  return c.body(PIXEL, 200, { 'Content-Type': 'image/gif', 'Cache-Control': 'no-store, max-age=0', 'X-Content-Type-Options': 'nosniff' });
};
