// Reading a certificate pair an operator (or an ACME order) brings: the one
// certificate, its private key, optionally its intermediates. Everything that
// makes a pair unusable for a TLS listener is a refusal naming the body field
// (`certificate`, `private_key`, `chain`) so the route can answer 400 with it.
// The key is proven to belong to the certificate by signing a random message
// with it and verifying that with the certificate's public key.
import { AsnConvert } from '@peculiar/asn1-schema';
import { PrivateKey, PrivateKeyInfo } from '@peculiar/asn1-pkcs8';
import { ECParameters, ECPrivateKey, id_ecPublicKey, id_secp256r1, id_secp384r1, id_secp521r1 } from '@peculiar/asn1-ecc';
import { AlgorithmIdentifier, SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import { pemBlocks, type PemBlock } from '../../crypto/pem.js';
import { hex, x509 } from '../../crypto/x509.js';

export type CertificateAlgorithm = 'rsa' | 'ecdsa' | 'ed25519';

/** What is stored next to a certificate (the `certificates` metadata columns). */
export interface CertificateMeta {
  subject: string;
  issuerSubject: string;
  /** SAN DNS names and IP addresses, in the certificate's order. */
  hosts: string[];
  algorithm: CertificateAlgorithm;
  /** Modulus bits for RSA, the curve's bits for ECDSA, 256 for Ed25519. */
  keySize: number;
  /** Lower-case hex. */
  serialNumber: string;
  /** Lower-case hex SHA-256 of the DER certificate. */
  fingerprintSha256: string;
  notBefore: Date;
  notAfter: Date;
  isAuthority: boolean;
  pathLength?: number;
}

export interface InspectedPair {
  ok: true;
  meta: CertificateMeta;
  /** The certificate alone, re-encoded as one PEM block. */
  certificatePem: string;
  /** The key as PKCS#8 ("PRIVATE KEY"), whatever form it came in. */
  privateKeyPkcs8Pem: string;
  /** The intermediates as PEM blocks in order, '' when none were given. */
  chainPem: string;
}

/** Keyed by the request body's field names: `certificate`, `private_key`, `chain`. */
export interface PairProblems { ok: false; fields: Record<string, string> }

export const MIN_RSA_BITS = 2048;
/** More intermediates than this is not a chain a listener should serve. */
export const MAX_CHAIN_CERTIFICATES = 10;

const RSA_ENCRYPTION = '1.2.840.113549.1.1.1';
const ED25519 = '1.3.101.112';
const ASN1_NULL = new Uint8Array([0x05, 0x00]).buffer;
const CURVES: Record<string, { name: 'P-256' | 'P-384'; bits: number }> = {
  [id_secp256r1]: { name: 'P-256', bits: 256 },
  [id_secp384r1]: { name: 'P-384', bits: 384 },
};
const KEY_LABELS = ['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY'];

/** WebCrypto algorithm parameters, named here so the file reads the same under workerd's and the DOM's types. */
export interface ImportParams { name: string; hash?: string; namedCurve?: string }
export interface SignParams { name: string; hash?: string }

/** How WebCrypto imports, signs and verifies with a key of the certificate's kind. */
interface KeyKind {
  algorithm: CertificateAlgorithm;
  keySize: number;
  oid: string;
  curveOid?: string;
  importParams: ImportParams;
  signParams: SignParams;
}

class Refusal extends Error {}

function label(algorithm: CertificateAlgorithm): string {
  return algorithm === 'rsa' ? 'RSA' : algorithm === 'ecdsa' ? 'ECDSA' : 'Ed25519';
}

/** The public key's kind, refusing what a listener cannot serve (small RSA, other curves, RSA-PSS, DSA...). */
export async function keyKind(spkiDer: ArrayBuffer): Promise<KeyKind> {
  let spki: SubjectPublicKeyInfo;
  try {
    spki = AsnConvert.parse(spkiDer, SubjectPublicKeyInfo);
  } catch {
    throw new Refusal('has an unreadable public key');
  }
  const oid = spki.algorithm.algorithm;
  if (oid === RSA_ENCRYPTION) {
    const importParams = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    const key = await crypto.subtle.importKey('spki', spkiDer, importParams, true, ['verify'])
      .catch(() => { throw new Refusal('has an unreadable RSA public key'); });
    const bits = (key.algorithm as unknown as { modulusLength: number }).modulusLength;
    if (bits < MIN_RSA_BITS) throw new Refusal(`has an RSA key of ${bits} bits: at least ${MIN_RSA_BITS} are required`);
    return { algorithm: 'rsa', keySize: bits, oid, importParams, signParams: { name: 'RSASSA-PKCS1-v1_5' } };
  }
  if (oid === id_ecPublicKey) {
    let curveOid: string | undefined;
    try {
      curveOid = spki.algorithm.parameters ? AsnConvert.parse(spki.algorithm.parameters, ECParameters).namedCurve : undefined;
    } catch { /* explicit or missing parameters: refused below */ }
    const curve = curveOid ? CURVES[curveOid] : undefined;
    if (!curve) {
      const named = curveOid === id_secp521r1 ? 'P-521' : curveOid ?? 'explicit parameters';
      throw new Refusal(`has an ECDSA key on an unsupported curve (${named}): use P-256 or P-384`);
    }
    return {
      algorithm: 'ecdsa', keySize: curve.bits, oid, curveOid,
      importParams: { name: 'ECDSA', namedCurve: curve.name },
      signParams: { name: 'ECDSA', hash: curve.bits === 384 ? 'SHA-384' : 'SHA-256' },
    };
  }
  if (oid === ED25519) {
    return { algorithm: 'ed25519', keySize: 256, oid, importParams: { name: 'Ed25519' }, signParams: { name: 'Ed25519' } };
  }
  throw new Refusal(`has a key of an unsupported algorithm (${oid}): use RSA (${MIN_RSA_BITS} bits or more) or ECDSA (P-256, P-384)`);
}

/** The metadata stored with a certificate; refuses keys a listener cannot serve. */
export async function describeCertificate(certificate: x509.X509Certificate): Promise<CertificateMeta> {
  const kind = await keyKind(certificate.publicKey.rawData);
  const san = certificate.getExtension(x509.SubjectAlternativeNameExtension);
  const hosts = (san?.names.items ?? []).filter((n) => n.type === 'dns' || n.type === 'ip').map((n) => n.value);
  const constraints = certificate.getExtension(x509.BasicConstraintsExtension);
  return {
    subject: certificate.subject,
    issuerSubject: certificate.issuer,
    hosts,
    algorithm: kind.algorithm,
    keySize: kind.keySize,
    serialNumber: certificate.serialNumber.toLowerCase(),
    fingerprintSha256: hex(await certificate.getThumbprint('SHA-256')),
    notBefore: certificate.notBefore,
    notAfter: certificate.notAfter,
    isAuthority: constraints?.ca === true,
    ...(constraints?.ca && constraints.pathLength !== undefined ? { pathLength: constraints.pathLength } : {}),
  };
}

function parseCertificate(block: PemBlock): x509.X509Certificate {
  try {
    const certificate = new x509.X509Certificate(new Uint8Array(block.der));
    // Touch what the library reads lazily, so a broken field fails here.
    void certificate.subject; void certificate.issuer; void certificate.notAfter; void certificate.extensions;
    return certificate;
  } catch {
    throw new Refusal('is not a readable X.509 certificate');
  }
}

function otherLabels(blocks: PemBlock[]): string {
  return [...new Set(blocks.map((b) => b.label))].join(', ');
}

function readLeaf(text: string): x509.X509Certificate {
  const blocks = pemBlocks(text);
  const certificates = blocks.filter((b) => b.label === 'CERTIFICATE');
  if (certificates.length === 0) {
    if (blocks.length) throw new Refusal(`holds a PEM ${otherLabels(blocks)}, not a certificate (-----BEGIN CERTIFICATE-----)`);
    throw new Refusal('is not a PEM certificate (-----BEGIN CERTIFICATE-----)');
  }
  if (certificates.length > 1) {
    throw new Refusal(`holds ${certificates.length} certificates: give the server certificate alone here and its intermediates in chain`);
  }
  return parseCertificate(certificates[0]!);
}

function readChain(text: string): x509.X509Certificate[] {
  const blocks = pemBlocks(text);
  if (blocks.length === 0) throw new Refusal('is not PEM certificates (-----BEGIN CERTIFICATE-----)');
  const others = blocks.filter((b) => b.label !== 'CERTIFICATE');
  if (others.length) throw new Refusal(`holds a PEM ${otherLabels(others)}: only intermediate certificates belong in chain`);
  if (blocks.length > MAX_CHAIN_CERTIFICATES) throw new Refusal(`holds ${blocks.length} certificates: at most ${MAX_CHAIN_CERTIFICATES}`);
  return blocks.map((b, i) => {
    try {
      return parseCertificate(b);
    } catch {
      throw new Refusal(`certificate ${i + 1} is not a readable X.509 certificate`);
    }
  });
}

async function signedBy(subject: x509.X509Certificate, issuer: x509.X509Certificate): Promise<boolean> {
  try {
    return await subject.verify({ publicKey: issuer.publicKey, signatureOnly: true });
  } catch {
    return false;
  }
}

/** Refuses a chain whose first certificate did not sign the leaf, or a link that does not chain. */
async function checkChain(leaf: x509.X509Certificate, chain: x509.X509Certificate[]): Promise<void> {
  if (!(await signedBy(leaf, chain[0]!))) {
    throw new Refusal(`does not chain: its first certificate (${chain[0]!.subject}) did not sign the certificate (issued by ${leaf.issuer})`);
  }
  for (let i = 0; i + 1 < chain.length; i++) {
    if (!(await signedBy(chain[i]!, chain[i + 1]!))) {
      throw new Refusal(`does not chain: certificate ${i + 2} (${chain[i + 1]!.subject}) did not sign certificate ${i + 1} (${chain[i]!.subject})`);
    }
  }
}

/** The key as PKCS#8 DER, with its algorithm OID (and curve for EC). */
interface Pkcs8 { der: ArrayBuffer; oid: string; curveOid?: string }

function readPkcs8(der: ArrayBuffer): Pkcs8 {
  const info = AsnConvert.parse(der, PrivateKeyInfo);
  const { algorithm, parameters } = info.privateKeyAlgorithm;
  const curveOid = algorithm === id_ecPublicKey && parameters ? AsnConvert.parse(parameters, ECParameters).namedCurve : undefined;
  return { der, oid: algorithm, ...(curveOid ? { curveOid } : {}) };
}

function wrap(oid: string, parameters: ArrayBuffer, key: Uint8Array): ArrayBuffer {
  return AsnConvert.serialize(new PrivateKeyInfo({
    privateKeyAlgorithm: new AlgorithmIdentifier({ algorithm: oid, parameters }),
    privateKey: new PrivateKey(key),
  }));
}

/**
 * The one private key of `text` as PKCS#8: "PRIVATE KEY" as is, PKCS#1
 * ("RSA PRIVATE KEY") and SEC1 ("EC PRIVATE KEY", what `openssl ecparam
 * -genkey` writes) wrapped. A SEC1 key without its curve takes the
 * certificate's (`fallbackCurveOid`).
 */
function readPrivateKey(text: string, fallbackCurveOid?: string): Pkcs8 {
  // Checked first: a legacy encrypted PEM has headers the block reader skips.
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,ENCRYPTED/.test(text)) {
    throw new Refusal('is encrypted: give it without a passphrase (openssl pkey -in key.pem -out plain-key.pem)');
  }
  const blocks = pemBlocks(text).filter((b) => b.label !== 'EC PARAMETERS');
  const keys = blocks.filter((b) => KEY_LABELS.includes(b.label));
  if (keys.length === 0) {
    if (blocks.length) throw new Refusal(`holds a PEM ${otherLabels(blocks)}, not a private key (-----BEGIN PRIVATE KEY-----)`);
    throw new Refusal('is not a PEM private key (-----BEGIN PRIVATE KEY-----)');
  }
  if (keys.length > 1) throw new Refusal(`holds ${keys.length} private keys: give exactly one`);
  const key = keys[0]!;
  try {
    if (key.label === 'PRIVATE KEY') return readPkcs8(key.der.slice().buffer);
    if (key.label === 'RSA PRIVATE KEY') return readPkcs8(wrap(RSA_ENCRYPTION, ASN1_NULL, key.der));
    const sec1 = AsnConvert.parse(key.der, ECPrivateKey);
    const curveOid = sec1.parameters?.namedCurve ?? fallbackCurveOid;
    if (!curveOid) throw new Refusal('is an EC key that does not name its curve');
    return readPkcs8(wrap(id_ecPublicKey, AsnConvert.serialize(new ECParameters({ namedCurve: curveOid })), key.der));
  } catch (err) {
    if (err instanceof Refusal) throw err;
    throw new Refusal(`is not a readable private key (${key.label})`);
  }
}

/**
 * Proves the key is the certificate's (sign a random message, verify it with
 * the certificate's public key) and returns it as PKCS#8 PEM, re-exported by
 * WebCrypto so every stored key has one form.
 */
async function matchKey(certificate: x509.X509Certificate, kind: KeyKind, key: Pkcs8): Promise<string> {
  const mismatch = new Refusal('does not match the certificate');
  if (key.oid !== kind.oid || key.curveOid !== kind.curveOid) throw mismatch;
  let privateKey: CryptoKey;
  try {
    privateKey = await crypto.subtle.importKey('pkcs8', key.der, kind.importParams, true, ['sign']);
  } catch {
    throw new Refusal(`is not a readable ${label(kind.algorithm)} private key`);
  }
  const message = crypto.getRandomValues(new Uint8Array(32));
  const signature = await crypto.subtle.sign(kind.signParams, privateKey, message);
  const publicKey = await crypto.subtle.importKey('spki', certificate.publicKey.rawData, kind.importParams, false, ['verify']);
  if (!(await crypto.subtle.verify(kind.signParams, publicKey, signature, message))) throw mismatch;
  return x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', privateKey) as ArrayBuffer, 'PRIVATE KEY');
}

async function attempt<T>(fields: Record<string, string>, field: string, run: () => T | Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    fields[field] = err.message;
    return undefined;
  }
}

/**
 * Reads and checks a certificate pair. Refused (each naming its field):
 * garbage or missing PEM, more than one certificate in `certificate`, an
 * encrypted or unreadable key, RSA under 2048 bits, a curve other than P-256
 * and P-384, a key that does not match the certificate, a `chain` that does
 * not chain to the certificate. Validity dates are the caller's to judge.
 */
export async function inspectPair(input: { certificate: string; privateKey: string; chain?: string | undefined }): Promise<InspectedPair | PairProblems> {
  const fields: Record<string, string> = {};
  const leaf = await attempt(fields, 'certificate', () => readLeaf(input.certificate));
  const meta = leaf && await attempt(fields, 'certificate', () => describeCertificate(leaf));
  const kind = leaf && meta && await attempt(fields, 'certificate', () => keyKind(leaf.publicKey.rawData));
  const key = await attempt(fields, 'private_key', () => readPrivateKey(input.privateKey, kind?.curveOid));
  const chain = input.chain?.trim() ? await attempt(fields, 'chain', () => readChain(input.chain!)) : [];
  if (leaf && chain?.length) await attempt(fields, 'chain', () => checkChain(leaf, chain));
  const privateKeyPkcs8Pem = leaf && kind && key && await attempt(fields, 'private_key', () => matchKey(leaf, kind, key));
  if (Object.keys(fields).length || !leaf || !meta || !privateKeyPkcs8Pem || !chain) return { ok: false, fields };
  return {
    ok: true,
    meta,
    certificatePem: `${leaf.toString('pem')}\n`,
    privateKeyPkcs8Pem,
    chainPem: chain.map((c) => `${c.toString('pem')}\n`).join(''),
  };
}
