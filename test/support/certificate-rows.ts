// Certificate rows written straight in the database, as the certificate routes
// would store them (private key sealed as edge/src/crypto/seal.ts seals it),
// for tests of what reads them: listener assignment, `edgemail tls`.
import type pg from 'pg';
import { seal } from '../../edge/src/crypto/seal.js';
import { PRIVATE_KEY_CONTEXT } from '../../edge/src/services/certificates/self-signed.js';
import { selfSignedPair } from './certificate.js';

export interface CertificateRow {
  name: string;
  kind: 'self_signed' | 'uploaded' | 'authority' | 'issued' | 'acme';
  hosts: string[];
  /** Negative: a certificate that expired that many days ago. */
  days: number;
}

/** Inserts a certificate for `hosts` (a real P-256 pair) and returns its id. */
export async function insertCertificate(sql: pg.Pool | pg.Client, encryptionKey: string, row: CertificateRow): Promise<string> {
  const notBefore = new Date(Date.now() - (row.days < 0 ? -row.days + 30 : 1) * 86_400_000);
  // An authority names no host: its name stands in for the subject.
  const pair = selfSignedPair({ hosts: row.hosts.length ? row.hosts : [row.name], notBefore, days: row.days < 0 ? 30 : row.days + 1 });
  const sealed = await seal(pair.privateKey, encryptionKey, PRIVATE_KEY_CONTEXT);
  const { rows: [inserted] } = await sql.query<{ id: string }>(
    `INSERT INTO certificates (name, kind, certificate_pem, private_key_sealed, subject, issuer_subject, hosts, algorithm, key_size, not_before, not_after)
     VALUES ($1, $2, $3, $4, $5, $5, $6, 'ecdsa', 256, $7, $8) RETURNING id`,
    [row.name, row.kind, pair.certificate, sealed, `CN=${row.hosts[0] ?? row.name}`, row.hosts, pair.notBefore, pair.notAfter]);
  return inserted!.id;
}
