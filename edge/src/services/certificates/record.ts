// The certificate record the admin routes answer with (contracts/certificate.ts),
// read in one query: the row, its issuer's name and the listeners it is
// assigned to. Never the private key: it is not selected.
import { eq, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { certificates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { iso } from '../../contracts/common.js';
import type { CertificateRecord } from '../../contracts/certificate.js';
import { notFound } from '../errors.js';

const issuers = alias(certificates, 'issuers');

const columns = {
  id: certificates.id,
  name: certificates.name,
  kind: certificates.kind,
  subject: certificates.subject,
  issuer: issuers.name,
  issuerSubject: certificates.issuerSubject,
  hosts: certificates.hosts,
  algorithm: certificates.algorithm,
  keySize: certificates.keySize,
  serialNumber: certificates.serialNumber,
  fingerprintSha256: certificates.fingerprintSha256,
  notBefore: certificates.notBefore,
  notAfter: certificates.notAfter,
  hasChain: sql<boolean>`${certificates.chainPem} <> ''`,
  assignedListeners: sql<string[]>`coalesce((select array_agg(lc.listener order by lc.listener) from listener_certificates lc where lc.certificate_id = ${certificates.id}), '{}'::text[])`,
  createdAt: certificates.createdAt,
  updatedAt: certificates.updatedAt,
};

const ALGORITHMS = ['rsa', 'ecdsa', 'ed25519'] as const;

function present(row: Row): CertificateRecord {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    is_authority: row.kind === 'authority',
    subject: row.subject,
    issuer: row.issuer,
    issuer_subject: row.issuerSubject,
    hosts: row.hosts,
    // The self-signed pair and ACME rows may be stored without their metadata.
    algorithm: (ALGORITHMS as readonly string[]).includes(row.algorithm) ? row.algorithm as CertificateRecord['algorithm'] : null,
    key_size: row.keySize,
    serial_number: row.serialNumber,
    fingerprint_sha256: row.fingerprintSha256,
    not_before: iso(row.notBefore),
    not_after: row.notAfter.toISOString(),
    has_chain: row.hasChain,
    assigned_listeners: row.assignedListeners ?? [],
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function selectRows(db: Db, where: SQL | undefined) {
  return db.select(columns).from(certificates)
    .leftJoin(issuers, eq(issuers.id, certificates.issuerId))
    .where(where)
    .orderBy(certificates.name);
}

type Row = Awaited<ReturnType<typeof selectRows>>[number];

async function select(db: Db, where: SQL | undefined): Promise<CertificateRecord[]> {
  return (await selectRows(db, where)).map(present);
}

/** Every stored certificate (authorities, issued, uploaded, the service's own), by name. */
export function listCertificates(db: Db): Promise<CertificateRecord[]> {
  return select(db, undefined);
}

/** The record of `name`; not_found when there is none. */
export async function findCertificate(db: Db, name: string): Promise<CertificateRecord> {
  const [record] = await select(db, eq(certificates.name, name));
  if (!record) throw notFound(`certificate not found: "${name}"`);
  return record;
}

/** The public PEM of `name`: the certificate, then its chain if any. Never a key. */
export async function certificatePem(db: Db, name: string): Promise<string> {
  const [row] = await db.select({ pem: certificates.certificatePem, chain: certificates.chainPem })
    .from(certificates).where(eq(certificates.name, name));
  if (!row) throw notFound(`certificate not found: "${name}"`);
  const pem = row.pem.endsWith('\n') ? row.pem : `${row.pem}\n`;
  return row.chain ? `${pem}${row.chain.endsWith('\n') ? row.chain : `${row.chain}\n`}` : pem;
}
