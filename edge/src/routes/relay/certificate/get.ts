import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { notFound } from '../../../http/errors.js';
import { assertInstallationWide } from '../../../middleware/relay-node.js';
import { CertificateQuery, ListenerCertificateSchema } from '../../../contracts/relay.js';
import { findListenerCertificate } from '../../../services/certificates/self-signed.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'get',
  path: '/relay/v1/certificate',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'The certificate a listener presents',
  description: 'By the spec\'s order: (1) assigned to the listener, (2) ACME, (3) the self-signed pair shared by all nodes. Only (3) exists so far; 404 until a node has offered it.',
  tags: ['Relay'],
  request: { query: CertificateQuery },
  errors: [403, 404],
  responses: {
    200: { description: 'Certificate chain and private key', content: { 'application/json': { schema: ListenerCertificateSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  assertInstallationWide(c);
  // The listener and SNI name choose among assignments and ACME, which arrive with the certificates issue.
  const pair = await findListenerCertificate(c.get('db'), c.get('config')['database.crypto.encryption_key']);
  if (!pair) throw notFound('no certificate');
  return c.json(pair, 200);
};
