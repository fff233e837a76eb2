// `/relay/v1/acme/*` (docs/relay-protocol.md, docs/acme.md): relay nodes order
// ACME certificates for `acme.hosts`; the edge decides who orders (a lease per
// host), holds the http-01 answers every node can serve, and stores what is
// issued in the shared certificate store.
import { z } from 'zod';

/** An ACME host as `acme.hosts` holds it: a lower-case DNS name. */
export const AcmeHost = z.string().min(1, 'must not be empty').max(253, 'must be at most 253 characters')
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/, 'must be a lower-case DNS name');

/** An http-01 token (RFC 8555 §8.3): base64url characters only, so it is safe in a path and a file name. */
export const ACME_TOKEN_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
export const AcmeToken = z.string().regex(ACME_TOKEN_PATTERN, 'must be 1 to 128 base64url characters');

/** `POST /relay/v1/acme/leases`: may this node order a certificate for `host` now? */
export const AcmeLeaseRequest = z.object({ host: AcmeHost }).strict();
export type AcmeLeaseRequest = z.input<typeof AcmeLeaseRequest>;

/** Why a lease was not granted: the stored certificate is not due for renewal, or another node is ordering. */
export const ACME_LEASE_DENIALS = ['not_due', 'held'] as const;

export const AcmeLeaseAnswer = z.object({
  host: z.string(),
  granted: z.boolean(),
  /** Granted: until when the lease is this node's (RFC 3339). `held`: until when another node's. `not_due`: null. */
  expires_at: z.string().nullable(),
  /** Null when granted. */
  reason: z.enum(ACME_LEASE_DENIALS).nullable(),
  /** The stored certificate's end (RFC 3339), null without one. */
  not_after: z.string().nullable(),
});
export type AcmeLeaseAnswer = z.output<typeof AcmeLeaseAnswer>;

/** `POST /relay/v1/acme/leases/failure`: the order failed; the edge keeps the error for operators and holds the host back. */
export const AcmeFailureRequest = z.object({
  host: AcmeHost,
  error: z.string().min(1, 'must not be empty').max(2000, 'must be at most 2000 characters'),
}).strict();
export type AcmeFailureRequest = z.input<typeof AcmeFailureRequest>;

export const AcmeFailureAnswer = z.object({
  host: z.string(),
  /** No node orders for the host again before this (RFC 3339). */
  retry_after: z.string(),
});
export type AcmeFailureAnswer = z.output<typeof AcmeFailureAnswer>;

/** `PUT /relay/v1/acme/challenges`: an http-01 answer, published before the CA is told to validate. */
export const AcmeChallengeRequest = z.object({
  token: AcmeToken,
  /** `<token>.<account key thumbprint>` (RFC 8555 §8.1). */
  key_authorization: z.string().min(1, 'must not be empty').max(256, 'must be at most 256 characters'),
  host: AcmeHost,
}).strict();
export type AcmeChallengeRequest = z.input<typeof AcmeChallengeRequest>;

export const AcmeChallengeAnswer = z.object({
  token: z.string(),
  key_authorization: z.string(),
  host: z.string(),
  /** RFC 3339. */
  expires_at: z.string(),
});
export type AcmeChallengeAnswer = z.output<typeof AcmeChallengeAnswer>;

export const AcmeChallengeRemoved = z.object({ token: z.string(), removed: z.boolean() });
export type AcmeChallengeRemoved = z.output<typeof AcmeChallengeRemoved>;

const Pem = z.string().min(1, 'must not be empty').max(32_768, 'must be at most 32768 characters');

/** `PUT /relay/v1/acme/certificates`: what the CA issued, with the key made for it. */
export const AcmeCertificateRequest = z.object({
  host: AcmeHost,
  /** The leaf alone (one PEM block). */
  certificate: Pem,
  /** The intermediates the CA sent after it, PEM; may be empty. */
  chain: z.string().max(65_536, 'must be at most 65536 characters'),
  /** PEM (PKCS#8). */
  private_key: Pem,
}).strict();
export type AcmeCertificateRequest = z.input<typeof AcmeCertificateRequest>;

export const AcmeCertificateAnswer = z.object({
  /** `acme:<host>`. */
  name: z.string(),
  host: z.string(),
  fingerprint_sha256: z.string(),
  /** RFC 3339. */
  not_after: z.string(),
});
export type AcmeCertificateAnswer = z.output<typeof AcmeCertificateAnswer>;

/** The certificate store's name of a host's ACME certificate: no operator name has a ':'. */
export const acmeCertificateName = (host: string) => `acme:${host}`;
