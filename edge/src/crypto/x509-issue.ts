// Making certificates on the edge: a new key, an authority (self-signed,
// pathlen:0) and a leaf signed by an authority, with @peculiar/x509 over the
// runtime's WebCrypto. Inputs arrive checked (services/certificates/).
import { hex, x509 } from './x509.js';

export type IssueAlgorithm = 'rsa' | 'ecdsa';

/** RSA keys are 2048 bits, ECDSA keys P-256: what every TLS client takes. */
const KEY_PARAMS = {
  rsa: { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
  ecdsa: { name: 'ECDSA', namedCurve: 'P-256' },
} as const;
const SIGN_PARAMS = {
  rsa: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  ecdsa: { name: 'ECDSA', hash: 'SHA-256' },
} as const;
/** How far back a new certificate starts, for a client whose clock is a little behind. */
export const BACKDATE_MS = 5 * 60_000;
const DAY_MS = 86_400_000;

export interface KeyPair { privateKey: CryptoKey; publicKey: CryptoKey }

export async function generateKeyPair(algorithm: IssueAlgorithm): Promise<KeyPair> {
  return await crypto.subtle.generateKey(KEY_PARAMS[algorithm] as never, true, ['sign', 'verify']) as KeyPair;
}

export async function exportPkcs8Pem(key: CryptoKey): Promise<string> {
  return `${x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', key) as ArrayBuffer, 'PRIVATE KEY')}\n`;
}

/** A positive 16-byte serial (RFC 5280 allows up to 20 octets). */
function serialNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return hex(bytes);
}

/** Subject attributes, each its own RDN: the name is built from this, never parsed from text. */
export interface SubjectFields { common_name: string; organization?: string | undefined; unit?: string | undefined; country?: string | undefined; state?: string | undefined; locality?: string | undefined }

function jsonName(subject: SubjectFields): x509.JsonName {
  const rdns: Array<[string, string | undefined]> = [
    ['C', subject.country], ['ST', subject.state], ['L', subject.locality],
    ['O', subject.organization], ['OU', subject.unit], ['CN', subject.common_name],
  ];
  return rdns.filter((r): r is [string, string] => !!r[1]).map(([type, value]) => ({ [type]: [value] }));
}

/**
 * A self-signed authority: CA:TRUE pathlen:0 (it signs leaves only) and
 * keyCertSign+cRLSign, both critical, with a subject key identifier.
 */
export async function createAuthority(input: { subject: SubjectFields; days: number; algorithm: IssueAlgorithm; now?: Date }) {
  const keys = await generateKeyPair(input.algorithm);
  const notBefore = new Date((input.now ?? new Date()).getTime() - BACKDATE_MS);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: jsonName(input.subject),
    notBefore,
    notAfter: new Date(notBefore.getTime() + input.days * DAY_MS),
    keys: keys as never,
    signingAlgorithm: SIGN_PARAMS[input.algorithm],
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey as never),
    ],
  });
  return { certificatePem: `${certificate.toString('pem')}\n`, privateKeyPem: await exportPkcs8Pem(keys.privateKey), certificate };
}

const isIpHost = (host: string) => host.includes(':') || /^\d+\.\d+\.\d+\.\d+$/.test(host);

/**
 * A server certificate for `hosts` signed by `issuer`: CA:FALSE,
 * digitalSignature (+keyEncipherment for RSA), serverAuth, SANs (DNS and IP),
 * the issuer's key identifier. It ends at `notAfter` (the caller has cut it to
 * the issuer's end).
 */
export async function issueLeaf(input: {
  hosts: string[];
  algorithm: IssueAlgorithm;
  notAfter: Date;
  issuer: x509.X509Certificate;
  issuerKey: CryptoKey;
  /** How the issuer's key signs (its hash for RSA, ECDSA). */
  signingAlgorithm: { name: string; hash?: string };
  now?: Date;
}) {
  const keys = await generateKeyPair(input.algorithm);
  const notBefore = new Date((input.now ?? new Date()).getTime() - BACKDATE_MS);
  const usage = x509.KeyUsageFlags.digitalSignature | (input.algorithm === 'rsa' ? x509.KeyUsageFlags.keyEncipherment : 0);
  const issuerKeyId = input.issuer.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
  const cn = input.hosts.find((h) => !isIpHost(h)) ?? input.hosts[0]!;
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: [{ CN: [cn] }],
    issuer: input.issuer.subjectName,
    notBefore,
    notAfter: input.notAfter,
    publicKey: keys.publicKey as never,
    signingKey: input.issuerKey as never,
    signingAlgorithm: input.signingAlgorithm as never,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(usage, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(input.hosts.map((h) => ({ type: isIpHost(h) ? 'ip' as const : 'dns' as const, value: h }))),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey as never),
      issuerKeyId
        ? new x509.AuthorityKeyIdentifierExtension(issuerKeyId)
        : await x509.AuthorityKeyIdentifierExtension.create(input.issuer.publicKey),
    ],
  });
  return { certificatePem: `${certificate.toString('pem')}\n`, privateKeyPem: await exportPkcs8Pem(keys.privateKey), certificate };
}
