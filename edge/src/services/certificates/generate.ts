// POST /api/v1/admin/certificates/generate: a server certificate signed by one
// of the stored authorities. The leaf is stored alone (never bundled with its
// root) with `issuer_id` set; renewal (renew.ts) re-issues it in place.
import { certificates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { seal } from '../../crypto/seal.js';
import { BACKDATE_MS, issueLeaf, type IssueAlgorithm } from '../../crypto/x509-issue.js';
import type { CertificateRecord, GenerateCertificateInput } from '../../contracts/certificate.js';
import { authorityByName, type Authority } from './authority.js';
import { metaColumns, nameExists, nameTaken } from './columns.js';
import { describeCertificate } from './inspect.js';
import { findCertificate } from './record.js';
import { PRIVATE_KEY_CONTEXT } from './self-signed.js';

const DAY_MS = 86_400_000;

/**
 * A new key and leaf for `hosts` from `authority`, valid `days` from five
 * minutes ago but never past the authority's end; the columns to store.
 */
export async function issueColumns(authority: Authority, encryptionKey: string, input: { hosts: string[]; algorithm: IssueAlgorithm; days: number }, now: Date) {
  const requested = new Date(now.getTime() - BACKDATE_MS + input.days * DAY_MS);
  const shortened = requested.getTime() > authority.notAfter.getTime();
  const leaf = await issueLeaf({
    hosts: input.hosts,
    algorithm: input.algorithm,
    notAfter: shortened ? authority.notAfter : requested,
    issuer: authority.certificate,
    issuerKey: authority.key,
    signingAlgorithm: authority.signingAlgorithm,
    now,
  });
  const meta = await describeCertificate(leaf.certificate);
  return {
    shortened,
    columns: {
      certificatePem: leaf.certificatePem,
      chainPem: '',
      privateKeySealed: await seal(leaf.privateKeyPem, encryptionKey, PRIVATE_KEY_CONTEXT),
      issuerId: authority.id,
      ...metaColumns(meta),
    },
  };
}

export async function generateCertificate(
  db: Db, encryptionKey: string, input: GenerateCertificateInput, now = new Date(),
): Promise<CertificateRecord & { shortened_to_issuer: boolean }> {
  if (await nameExists(db, input.name)) throw nameTaken(input.name);
  const authority = await authorityByName(db, encryptionKey, input.issuer, now);
  const issued = await issueColumns(authority, encryptionKey, { hosts: input.hosts, algorithm: input.algorithm, days: input.validity_days }, now);
  const inserted = await db.insert(certificates).values({ name: input.name, kind: 'issued', ...issued.columns })
    .onConflictDoNothing({ target: certificates.name }).returning({ id: certificates.id });
  if (!inserted.length) throw nameTaken(input.name);
  return { ...await findCertificate(db, input.name), shortened_to_issuer: issued.shortened };
}
