// The installation's self-signed listener certificate (the spec's step 3 of
// certificate resolution), made by the first node that finds none.
import { isIP } from 'node:net';
import { randomBytes, webcrypto } from 'node:crypto';

export interface GeneratedPair {
  /** PEM certificate. */
  certificate: string;
  /** PEM PKCS#8 private key. */
  private_key: string;
  not_after: string;
}

// The edge refuses a pair valid for more than 398 days (the CA/Browser Forum
// ceiling TLS clients enforce). Renewing it before then comes with the
// certificates issue (assignment, ACME and rotation).
const VALIDITY_DAYS = 397;
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/**
 * The names the pair covers: the host of `server.public_url`, `*.` that host
 * (not for an IP address) and `localhost`.
 *
 * @example certificateNames('https://mail.example.com') // ['mail.example.com', '*.mail.example.com', 'localhost']
 */
export function certificateNames(publicUrl: string): string[] {
  const host = new URL(publicUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const names = isIP(host) ? [host] : [host, `*.${host}`];
  return [...new Set([...names, 'localhost'])];
}

/**
 * A new ECDSA P-256 key and a certificate for `names` signed by it, with
 * @peculiar/x509 over Node's WebCrypto (Node can parse X.509 but not issue
 * it). IP addresses become IP SANs, the rest DNS SANs; the first name is the
 * subject CN.
 */
export async function generateSelfSigned(names: string[], now = new Date()): Promise<GeneratedPair> {
  // @peculiar/x509 2.x resolves its algorithms through tsyringe, which needs
  // the Reflect metadata polyfill loaded first. Loaded on first use only: most
  // starts find the pair already made.
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  // Its `Crypto` is the DOM type, which Node's WebCrypto implements.
  x509.cryptoProvider.set(webcrypto as never);
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const notBefore = new Date(now.getTime() - 5 * 60_000); // tolerate a client clock a little behind
  const notAfter = new Date(now.getTime() + VALIDITY_DAYS * 86_400_000);
  const cn = names[0] ?? 'localhost';
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    // Positive, 16 bytes: RFC 5280 allows up to 20 octets.
    serialNumber: `01${randomBytes(15).toString('hex')}`,
    name: `CN=${cn.replace(/[,+"\\<>;=]/g, '')}`,
    notBefore,
    notAfter,
    keys: keys as never,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names.map((n) => (isIP(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n }))),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return {
    certificate: certificate.toString('pem'),
    private_key: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'),
    not_after: notAfter.toISOString(),
  };
}
