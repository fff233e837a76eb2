// `GET /relay/v1/certificate` and `PUT /relay/v1/certificate/self-signed`
// (docs/relay-protocol.md): the pair a listener presents.
import { z } from 'zod';

/** Where the edge's pair comes from: the self-signed pair shared by all nodes is the only one so far. */
export const CERTIFICATE_SOURCES = ['self_signed'] as const;

/** The query of `GET /relay/v1/certificate`. */
export const CertificateQuery = z.object({
  listener: z.string().max(64).optional(),
  /** The SNI name of the handshake. */
  name: z.string().max(253).optional(),
});
export type CertificateQuery = z.input<typeof CertificateQuery>;

/** A listener certificate as the edge hands it out. */
export const CertificateAnswer = z.object({
  /** PEM chain, leaf first. */
  certificate: z.string(),
  /** PEM (PKCS#8). */
  private_key: z.string(),
  source: z.enum(CERTIFICATE_SOURCES),
  /** RFC 3339. */
  not_after: z.string(),
});
export type CertificateAnswer = z.output<typeof CertificateAnswer>;

const Pem = z.string().min(1, 'must not be empty').max(32_768, 'must be at most 32768 characters');

/** The self-signed pair a node generated, offered after a 404. */
export const SelfSignedOffer = z.object({ certificate: Pem, private_key: Pem }).strict();
export type SelfSignedOffer = z.input<typeof SelfSignedOffer>;
