// DKIM key pairs for sending domains, made with WebCrypto so the Worker can
// generate them itself. The private half leaves as PKCS#8 PEM (what nodemailer
// and mailauth take); the public half as the DNS `p=` value.
import { toBase64 } from '@edgemail/shared';

export const DKIM_ALGORITHMS = ['rsa', 'ed25519'] as const;
export type DkimAlgorithm = (typeof DKIM_ALGORITHMS)[number];

export const isDkimAlgorithm = (text: unknown): text is DkimAlgorithm =>
  typeof text === 'string' && (DKIM_ALGORITHMS as readonly string[]).includes(text);

/** RFC 8301 asks for at least 1024 bits and recommends 2048; longer keys overflow many DNS interfaces. */
export const RSA_MODULUS_BITS = 2048;

export interface DkimKeyPair {
  algorithm: DkimAlgorithm;
  /** PKCS#8, PEM armoured (`-----BEGIN PRIVATE KEY-----`). */
  privateKeyPem: string;
  /**
   * The `p=` tag of the DNS record: base64 of the SubjectPublicKeyInfo DER for
   * RSA (RFC 6376 3.6.1), of the raw 32-byte key for Ed25519 (RFC 8463 4.2).
   */
  publicKey: string;
}

function pem(label: string, der: ArrayBuffer): string {
  const lines = toBase64(new Uint8Array(der)).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/**
 * A fresh key pair: RSA 2048 (RSASSA-PKCS1-v1_5 with SHA-256, `rsa-sha256`)
 * or Ed25519 (`ed25519-sha256`, RFC 8463).
 *
 * @example
 * const { privateKeyPem, publicKey } = await generateDkimKeyPair('ed25519');
 * `v=DKIM1; k=ed25519; p=${publicKey}`; // the TXT record to publish
 */
export async function generateDkimKeyPair(algorithm: DkimAlgorithm = 'rsa'): Promise<DkimKeyPair> {
  const params = algorithm === 'rsa'
    ? { name: 'RSASSA-PKCS1-v1_5', modulusLength: RSA_MODULUS_BITS, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }
    : { name: 'Ed25519' };
  const pair = (await crypto.subtle.generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair;
  const [pkcs8, publicDer] = await Promise.all([
    crypto.subtle.exportKey('pkcs8', pair.privateKey) as Promise<ArrayBuffer>,
    crypto.subtle.exportKey(algorithm === 'rsa' ? 'spki' : 'raw', pair.publicKey) as Promise<ArrayBuffer>,
  ]);
  return { algorithm, privateKeyPem: pem('PRIVATE KEY', pkcs8), publicKey: toBase64(new Uint8Array(publicDer)) };
}

/**
 * The selector a key is published under: `em` and the UTC year and month the
 * key was made (`em202611`). Dated so a later key (rotation) gets a new name
 * and both can be published while mail signed with the old one is in flight.
 */
export function dkimSelector(at: Date = new Date()): string {
  return `em${at.getUTCFullYear()}${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The TXT value to publish at `<selector>._domainkey.<domain>`. */
export const dkimTxtValue = (algorithm: DkimAlgorithm, publicKey: string) => `v=DKIM1; k=${algorithm}; p=${publicKey}`;
