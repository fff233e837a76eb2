import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { badRequest } from '../../../http/errors.js';
import { assertInstallationWide } from '../../../middleware/relay-node.js';
import { ListenerCertificateSchema, SelfSignedOfferSchema } from '../../../contracts/relay.js';
import { offerSelfSigned } from '../../../services/certificates/self-signed.js';
import { inspectPair } from '../../../services/certificates/inspect.js';
import type { AppEnv } from '../../../env.js';

/** The spec's longest listener certificate lifetime, and a day of clock slack. */
const MAX_LIFETIME_MS = (398 + 1) * 86_400_000;

export const route = defineRelayRoute({
  method: 'put',
  path: '/relay/v1/certificate/self-signed',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Offer the self-signed pair',
  description: 'A node that was answered 404 generates the pair (the host of `server.public_url`, `*.` that host and `localhost`; at most 398 days) and offers it. The first offer is stored, its private key sealed; every offer is answered with the stored pair. An offer that outlives a stored pair within 30 days of its end replaces it (renewal). A key that does not match the certificate is 400 (`private_key`).',
  tags: ['Relay'],
  errors: [403],
  request: { body: { required: true, content: { 'application/json': { schema: SelfSignedOfferSchema } } } },
  responses: {
    200: { description: 'The stored pair (perhaps another node\'s)', content: { 'application/json': { schema: ListenerCertificateSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  assertInstallationWide(c);
  const offer = c.req.valid('json');
  // Read as an uploaded pair is (metadata columns, a key that does not match refused: a pair
  // every node would fail to present); the leaf comes first, anything after it is its chain.
  const [leaf, ...chain] = offer.certificate.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  const read = await inspectPair({ certificate: leaf ?? offer.certificate, privateKey: offer.private_key, chain: chain.join('\n') });
  if (!read.ok) {
    const [field, problem] = Object.entries(read.fields)[0]!;
    throw badRequest(`invalid request body: ${field}: ${problem}`, read.fields);
  }
  const notAfter = read.meta.notAfter;
  const now = Date.now();
  if (notAfter.getTime() <= now) throw badRequest('invalid request body: certificate: has expired', { certificate: 'has expired' });
  if (notAfter.getTime() - now > MAX_LIFETIME_MS) {
    throw badRequest('invalid request body: certificate: must expire within 398 days', { certificate: 'must expire within 398 days' });
  }
  const pair = await offerSelfSigned(c.get('db'), c.get('config')['database.crypto.encryption_key'], {
    certificate: offer.certificate, privateKey: offer.private_key, notAfter, meta: read.meta,
  });
  return c.json(pair, 200);
};
