import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { AcmeCertificateAnswerSchema, AcmeCertificateSchema } from '../../../contracts/relay-acme.js';
import { assertAcmeNode } from '../../../services/certificates/acme-leases.js';
import { storeAcmeCertificate } from '../../../services/certificates/acme-store.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'put',
  path: '/relay/v1/acme/certificates',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Store an issued ACME certificate',
  description: 'The ordering node stores `{host, certificate, chain, private_key}`: refused with 400 naming the field when the pair is unreadable, the key does not match, the chain does not chain, the certificate is an authority, does not name the host among its SANs, or is not valid now. Stored as `acme:<host>` (kind `acme`, private key sealed), replacing the previous one, and the lease released; every node picks it up at its next certificate poll. Only the node holding the host\'s lease, while it is live, stores: 409 `this node\'s ACME lease for <host> has expired: …` once its 10 minutes are over (another node may be ordering by then), 409 `this node holds no ACME lease for <host>` when it holds none or another node holds it; nothing is stored. 403 as for the lease.',
  tags: ['Relay'],
  errors: [403, 409],
  request: { body: { required: true, content: { 'application/json': { schema: AcmeCertificateSchema } } } },
  responses: {
    200: { description: 'Stored', content: { 'application/json': { schema: AcmeCertificateAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const node = c.get('relayNode');
  assertAcmeNode(node);
  return c.json(await storeAcmeCertificate(c.get('db'), c.get('config'), node.id, c.req.valid('json')), 200);
};
