// POST /api/v1/admin/certificates/generate-ca: a new internal authority. A
// name in use is refused, never replaced (spec).
import { certificates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { seal } from '../../crypto/seal.js';
import { createAuthority } from '../../crypto/x509-issue.js';
import type { CertificateRecord, GenerateAuthorityInput } from '../../contracts/certificate.js';
import { describeCertificate } from './inspect.js';
import { metaColumns, nameExists, nameTaken } from './columns.js';
import { findCertificate } from './record.js';
import { PRIVATE_KEY_CONTEXT } from './self-signed.js';

export async function generateAuthority(db: Db, encryptionKey: string, input: GenerateAuthorityInput, now = new Date()): Promise<CertificateRecord> {
  // Checked before the key is made (RSA takes a while); the insert below settles a race.
  if (await nameExists(db, input.name)) throw nameTaken(input.name);
  const made = await createAuthority({
    subject: { ...input.subject, common_name: input.subject.common_name ?? input.name },
    days: input.validity_days,
    algorithm: input.algorithm,
    now,
  });
  const meta = await describeCertificate(made.certificate);
  const inserted = await db.insert(certificates).values({
    name: input.name,
    kind: 'authority',
    certificatePem: made.certificatePem,
    privateKeySealed: await seal(made.privateKeyPem, encryptionKey, PRIVATE_KEY_CONTEXT),
    ...metaColumns(meta),
  }).onConflictDoNothing({ target: certificates.name }).returning({ id: certificates.id });
  if (!inserted.length) throw nameTaken(input.name);
  return findCertificate(db, input.name);
}
