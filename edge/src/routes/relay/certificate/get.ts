import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { notFound } from '../../../http/errors.js';
import { assertInstallationWide } from '../../../middleware/relay-node.js';
import { CertificateQuery, ListenerCertificateSchema } from '../../../contracts/relay.js';
import { findListenerCertificate } from '../../../services/certificates/self-signed.js';
import { findAssignedCertificate } from '../../../services/certificates/bundle.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'get',
  path: '/relay/v1/certificate',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'The certificate a listener presents',
  description: 'For nodes older than `GET /relay/v1/certificates` (which newer nodes poll instead, resolving each handshake themselves): (1) the certificate assigned to `listener` (source `assigned`), else (3) the self-signed pair shared by all nodes; 404 until a node has offered it. ACME (step 2) is chosen per SNI name on nodes from the bundle, not here.',
  tags: ['Relay'],
  request: { query: CertificateQuery },
  errors: [403, 404],
  responses: {
    200: { description: 'Certificate chain and private key', content: { 'application/json': { schema: ListenerCertificateSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  assertInstallationWide(c);
  const key = c.get('config')['database.crypto.encryption_key'];
  const { listener } = c.req.valid('query');
  const pair = (listener ? await findAssignedCertificate(c.get('db'), key, listener) : null)
    ?? await findListenerCertificate(c.get('db'), key);
  if (!pair) throw notFound('no certificate');
  return c.json(pair, 200);
};
