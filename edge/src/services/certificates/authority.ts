// An authority's certificate and signing key, read back to issue with: by
// name for `generate`, by id for renewal. Refusals name the `issuer` field.
import { eq } from 'drizzle-orm';
import { certificates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { unseal } from '../../crypto/seal.js';
import { x509 } from '../../crypto/x509.js';
import { conflict, invalid } from '../errors.js';
import { keyKind, type SignParams } from './inspect.js';
import { PRIVATE_KEY_CONTEXT } from './self-signed.js';

export interface Authority {
  id: string;
  name: string;
  certificate: x509.X509Certificate;
  key: CryptoKey;
  /** How its key signs, for the generator. */
  signingAlgorithm: SignParams;
  notAfter: Date;
}

type AuthorityRow = { id: string; name: string; kind: string; pem: string; sealed: string; notAfter: Date };

const authorityColumns = {
  id: certificates.id, name: certificates.name, kind: certificates.kind,
  pem: certificates.certificatePem, sealed: certificates.privateKeySealed, notAfter: certificates.notAfter,
};

async function open(row: AuthorityRow, encryptionKey: string): Promise<Authority> {
  const certificate = new x509.X509Certificate(row.pem);
  const kind = await keyKind(certificate.publicKey.rawData);
  const pkcs8 = x509.PemConverter.decodeFirst(await unseal(row.sealed, encryptionKey, PRIVATE_KEY_CONTEXT));
  const key = await crypto.subtle.importKey('pkcs8', pkcs8, kind.importParams, false, ['sign']);
  // RSA names its hash on the key; ECDSA on the signature.
  const signingAlgorithm = kind.algorithm === 'rsa' ? kind.importParams : kind.signParams;
  return { id: row.id, name: row.name, certificate, key, signingAlgorithm, notAfter: row.notAfter };
}

/**
 * The authority named `name`, ready to sign. Refused: no such certificate or
 * one that is not an authority (invalid, naming `issuer`), an authority whose
 * end has passed (conflict).
 */
export async function authorityByName(db: Db, encryptionKey: string, name: string, now: Date): Promise<Authority> {
  const [row] = await db.select(authorityColumns).from(certificates).where(eq(certificates.name, name));
  if (!row) throw invalid(`invalid request body: issuer: no certificate named "${name}"`, { issuer: `no certificate named "${name}"` });
  if (row.kind !== 'authority') {
    const problem = `"${name}" is not a certificate authority (it is ${row.kind.replace('_', '-')}): name an authority made with generate-ca or uploaded`;
    throw invalid(`invalid request body: issuer: ${problem}`, { issuer: problem });
  }
  if (row.notAfter.getTime() <= now.getTime()) {
    throw conflict(`issuer "${name}" expired on ${row.notAfter.toISOString()}: it cannot issue; create a new authority`);
  }
  return open(row, encryptionKey);
}

/** The authority with this id, or null when it is gone or no longer an authority (renewal skips those). */
export async function authorityById(db: Db, encryptionKey: string, id: string): Promise<Authority | null> {
  const [row] = await db.select(authorityColumns).from(certificates).where(eq(certificates.id, id));
  return row && row.kind === 'authority' ? open(row, encryptionKey) : null;
}
