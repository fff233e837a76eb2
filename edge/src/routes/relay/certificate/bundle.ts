import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { assertInstallationWide } from '../../../middleware/relay-node.js';
import { CertificateBundleSchema, IfNoneMatchHeader } from '../../../contracts/relay.js';
import { generationEtag, matchesGeneration, readBundle, tlsGeneration } from '../../../services/certificates/bundle.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'get',
  path: '/relay/v1/certificates',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Every certificate a node may present',
  description: 'The bundle a node resolves each handshake from (the spec\'s order: (1) the certificate assigned to the listener, (2) ACME for a name in the node\'s `acme.hosts`, (3) the shared self-signed pair): per listener the assigned name or null, ACME host → name, the self-signed pair\'s name, and each of those certificates with its chain and private key. Nodes poll it every 15 s with `If-None-Match: "<generation>"`: while no certificate or assignment has changed the answer is 304 with no body, read from one row. Installation-wide nodes only (403 otherwise); counts in `ratelimit.relay_node_chatter_per_minute`.',
  tags: ['Relay'],
  request: { headers: IfNoneMatchHeader },
  errors: [403],
  responses: {
    200: {
      description: 'The bundle; `ETag: "<generation>"`',
      headers: { ETag: { description: 'The bundle\'s generation, quoted', schema: { type: 'string', example: '"42"' } } },
      content: { 'application/json': { schema: CertificateBundleSchema } },
    },
    304: { description: 'Unchanged since the generation named in If-None-Match; no body' },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  assertInstallationWide(c);
  // The generation first, then the rows: readBundle() says why this order is safe.
  const generation = await tlsGeneration(c.get('db'));
  const etag = generationEtag(generation);
  if (matchesGeneration(c.req.header('if-none-match'), generation)) return c.body(null, 304, { ETag: etag });
  const bundle = await readBundle(c.get('db'), c.get('config')['database.crypto.encryption_key'], generation);
  return c.json(bundle, 200, { ETag: etag });
};
