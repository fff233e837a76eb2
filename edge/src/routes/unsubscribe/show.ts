import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineUnsubscribeRoute } from '../../http/define-unsubscribe-route.js';
import { UnsubscribeParams } from '../../contracts/unsubscribe.js';
import { checkHttpsToken } from '../../services/unsubscribe/apply.js';
import { confirmPage, expiredPage, invalidPage, pageHeaders } from '../../services/unsubscribe/page.js';
import type { AppEnv } from '../../env.js';

const html = { 'text/html': { schema: z.string() } };

export const route = defineUnsubscribeRoute({
  method: 'get',
  path: '/unsubscribe/{token}',
  summary: 'One-click unsubscribe: the confirmation page',
  description: 'What a person sees on opening the `List-Unsubscribe` link of a message: a small HTML page (strict Content-Security-Policy: no script, style or image; the form may post only to this origin) naming the stream and the address (partly hidden), with a button that POSTs `List-Unsubscribe=One-Click` to the same link. Opening it changes nothing (link scanners and prefetchers open links too). An invalid token is a 404 page, an expired one a 410 page.',
  tags: ['Unsubscribe'],
  request: { params: UnsubscribeParams },
  responses: {
    200: { description: 'The confirmation page', content: html },
    404: { description: 'Not a token this installation signed: a page saying so', content: html },
    410: { description: 'A token past `sending.unsubscribe_link_ttl`: a page saying so', content: html },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const verdict = await checkHttpsToken(c.get('db'), c.get('config'), c.req.valid('param').token);
  if (!verdict.ok) return c.body(verdict.kind === 'expired' ? expiredPage() : invalidPage(), verdict.kind === 'expired' ? 410 : 404, pageHeaders);
  return c.body(confirmPage(verdict.unsubscribe.shownAddress, verdict.unsubscribe.stream), 200, pageHeaders);
};
