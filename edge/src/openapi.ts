// The OpenAPI 3.1 document, generated from the route declarations.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './env.js';
import { nameOperations, type NamedDocument, type ResourceTags } from './http/operation-names.js';
import { API_TAGS, APP_TAGS } from './http/resource-tags.js';

/** `relay` is the relay-node channel (`/relay/v1`), `webhooks` what providers post to (`/webhooks`), each documented apart from the machine API. */
export type Surface = 'api' | 'app' | 'relay' | 'webhooks' | 'tracking' | 'unsubscribe';

const PREFIX: Record<Surface, string> = { api: '/api/v1', app: '/app/api', relay: '/relay/v1', webhooks: '/webhooks/', tracking: '/t/', unsubscribe: '/unsubscribe/' };
const TITLE: Record<Surface, string> = { api: 'edgemail machine API', app: 'edgemail console API', relay: 'edgemail relay-node channel', webhooks: 'edgemail provider webhooks', tracking: 'edgemail open and click tracking', unsubscribe: 'edgemail one-click unsubscribe' };
const DESCRIPTION: Record<Surface, string> = {
  api: 'Each operation names the permission it needs in `x-permission`.',
  app: 'Each operation names the permission it needs in `x-permission`.',
  relay: 'What relay nodes call (docs/relay-protocol.md). `x-relay-credential` says which credential a route takes, `x-rate-limit` which limiter counts it.',
  webhooks: 'What providers post to (docs/ses.md): no credential of ours, each message carries its own proof. `x-rate-limit` names the limiter counting each client address.',
  tracking: 'What recipients\' mail clients fetch (docs/tracking.md): no credential, a signed token in the path. `x-rate-limit` names the limiter counting each client address.',
  unsubscribe: 'What mailbox providers post and recipients open to unsubscribe (RFC 8058; docs/sending.md, "One-click unsubscribe"): no credential, a signed token in the path. `x-rate-limit` names the limiter counting each client address.',
};

export function openApiDocument(app: OpenAPIHono<AppEnv>, surface: Surface) {
  const doc = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: TITLE[surface],
      version: '1.0.0',
      description: DESCRIPTION[surface],
    },
    servers: [{ url: '/' }],
    security: surface === 'webhooks' || surface === 'tracking' || surface === 'unsubscribe' ? [] : surface === 'relay' ? [{ relayNodeCredential: [] }] : [{ bearerAuth: [] }, { sessionCookie: [] }],
  });
  doc.paths = Object.fromEntries(Object.entries(doc.paths ?? {}).filter(([path]) => path.startsWith(PREFIX[surface])));
  // The two documents clients are generated from name each operation `<resource>_<method>` and tag it by resource.
  const named = NAMED[surface];
  if (named) nameOperations(doc as NamedDocument, `${PREFIX[surface]}/`, named);
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, { operationId?: string } | undefined>)[method];
      if (operation) operation.operationId ??= operationId(method, path, PREFIX[surface]);
    }
  }
  doc.components = {
    ...doc.components,
    schemas: referencedSchemas(doc.paths, doc.components?.schemas ?? {}),
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: '`myk_` project key, or `mya_` platform credential on /api/v1/admin' },
      sessionCookie: {
        type: 'apiKey', in: 'cookie', name: '__Host-edgemail_session',
        description: 'A console session (`POST /app/api/session`). The cookie is `__Host-edgemail_session` wherever it is `Secure` (every deployment but plain http on a loopback host, as `pnpm dev`, where it is `edgemail_session`); only the name the deployment sets is read.',
      },
      ...(surface === 'relay' ? { relayNodeCredential: { type: 'http', scheme: 'bearer', description: '`myr_` relay node credential, issued by `POST /relay/v1/enroll`' } } : {}),
    },
  };
  return doc;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
const NAMED: Partial<Record<Surface, ResourceTags>> = { api: API_TAGS, app: APP_TAGS };

/**
 * A stable operationId from the method and path, unique within a surface as
 * method and path are (`POST /relay/v1/outbound/claim` → `postOutboundClaim`):
 * the surfaces no client is generated from (relay, webhooks, tracking, unsubscribe).
 */
export function operationId(method: string, path: string, prefix: string): string {
  const words = path.slice(prefix.replace(/\/$/, '').length).split('/').filter(Boolean).flatMap((segment) => {
    const param = /^\{(.+)\}$/.exec(segment);
    return param ? ['by', ...param[1]!.split(/[_-]/)] : segment.split(/[_.-]/);
  });
  return method + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

/** The named schemas the paths use, directly or through one another: one surface's never show in another's. */
function referencedSchemas<S>(paths: unknown, schemas: Record<string, S>): Record<string, S> {
  const REF = /"#\/components\/schemas\/([^"]+)"/g;
  const kept = new Set<string>();
  const pending = [JSON.stringify(paths)];
  while (pending.length) {
    for (const [, name] of pending.pop()!.matchAll(REF)) {
      if (kept.has(name!) || !(name! in schemas)) continue;
      kept.add(name!);
      pending.push(JSON.stringify(schemas[name!]));
    }
  }
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => kept.has(name)));
}
