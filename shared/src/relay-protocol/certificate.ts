// `GET /relay/v1/certificate` and `PUT /relay/v1/certificate/self-signed`
// (docs/relay-protocol.md): the pair a listener presents.
import { z } from 'zod';

/**
 * Where the edge's pair comes from, by the spec's order: `assigned` to the
 * listener (step 1), `acme` (step 2, chosen on the node), the `self_signed`
 * pair shared by all nodes (step 3). A node older than assignments knows
 * `self_signed` only and refuses an `assigned` answer as malformed (it keeps
 * what it presents): docs/relay-protocol.md.
 */
export const CERTIFICATE_SOURCES = ['assigned', 'acme', 'self_signed'] as const;

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

/** A certificate a node may present, as `GET /relay/v1/certificates` hands it out. */
export const BundleCertificate = z.object({
  /** PEM: the certificate, then its chain (intermediates), if any. */
  certificate: z.string(),
  /** PEM (PKCS#8), unsealed. */
  private_key: z.string(),
  /** RFC 3339. */
  not_after: z.string(),
  /** `self_signed`, `uploaded`, `issued`, `acme` (a string: kinds a newer edge may add). */
  kind: z.string().max(32),
});
export type BundleCertificate = z.output<typeof BundleCertificate>;

/**
 * `GET /relay/v1/certificates`: everything a node may present, so that it
 * resolves each handshake itself (docs/relay-protocol.md). Names point into
 * `certificates`.
 */
export const CertificateBundle = z.object({
  /** `tls_state.generation`, also the ETag: unchanged generation, unchanged bundle. */
  generation: z.number().int().min(0),
  /** Per listener (`inbound`, `submission`): the assigned certificate's name, or null (step 1). */
  listeners: z.record(z.string(), z.string().nullable()),
  /** Host name → the ACME certificate's name (`acme:<host>`) (step 2). */
  acme: z.record(z.string(), z.string()),
  /** The shared self-signed pair's name, or null until a node has offered one (step 3). */
  self_signed: z.string().nullable(),
  certificates: z.record(z.string(), BundleCertificate),
});
export type CertificateBundle = z.output<typeof CertificateBundle>;
