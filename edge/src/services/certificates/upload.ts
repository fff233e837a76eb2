// POST /api/v1/admin/certificates: an operator's own pair. A new name is
// created; an existing uploaded or issued certificate of that name is
// replaced in place (rotation: its row, id and listener assignments stay).
// The service's own certificates (self-signed, acme:*) and authorities are
// not replaced, and an authority is never put where a listener serves it.
import { and, eq, notExists, or, sql } from 'drizzle-orm';
import { certificates, listenerCertificates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { seal } from '../../crypto/seal.js';
import { SELF_SIGNED_NAME, type CertificateRecord, type UploadCertificateInput } from '../../contracts/certificate.js';
import { conflict, invalid } from '../errors.js';
import { metaColumns, serviceManaged } from './columns.js';
import { inspectPair } from './inspect.js';
import { findCertificate } from './record.js';
import { PRIVATE_KEY_CONTEXT } from './self-signed.js';

const refuse = (field: string, problem: string) => invalid(`invalid request body: ${field}: ${problem}`, { [field]: problem });

export async function uploadCertificate(
  db: Db, encryptionKey: string, input: UploadCertificateInput, now = new Date(),
): Promise<{ certificate: CertificateRecord; created: boolean }> {
  if (input.name === SELF_SIGNED_NAME) throw serviceManaged(input.name);
  const pair = await inspectPair({ certificate: input.certificate, privateKey: input.private_key, chain: input.chain });
  if (!pair.ok) {
    const [field, problem] = Object.entries(pair.fields)[0]!;
    throw invalid(`invalid request body: ${field}: ${problem}`, pair.fields);
  }
  const { meta } = pair;
  // Documented choice: a pair a listener could not serve today is refused.
  if (meta.notBefore.getTime() > now.getTime()) throw refuse('certificate', `is not valid yet (from ${meta.notBefore.toISOString()}): upload it once it is`);
  if (meta.notAfter.getTime() <= now.getTime()) throw refuse('certificate', `expired on ${meta.notAfter.toISOString()}`);
  if (meta.isAuthority && meta.algorithm === 'ed25519') throw refuse('certificate', 'is an Ed25519 authority: ed25519 is not accepted for an authority');

  const kind = meta.isAuthority ? 'authority' as const : 'uploaded' as const;
  const columns = {
    kind,
    certificatePem: pair.certificatePem,
    chainPem: pair.chainPem,
    privateKeySealed: await seal(pair.privateKeyPkcs8Pem, encryptionKey, PRIVATE_KEY_CONTEXT),
    issuerId: null,
    ...metaColumns(meta),
  };
  const servedByListener = db.select({ one: sql`1` }).from(listenerCertificates).where(eq(listenerCertificates.certificateId, certificates.id));
  // One statement: the checks on the stored row and the write cannot be split by another writer.
  const [written] = await db.insert(certificates).values({ name: input.name, ...columns })
    .onConflictDoUpdate({
      target: certificates.name,
      set: { ...columns, updatedAt: sql`now()` },
      setWhere: and(
        or(eq(certificates.kind, 'uploaded'), eq(certificates.kind, 'issued')),
        kind === 'authority' ? notExists(servedByListener) : undefined,
      ),
    })
    .returning({ created: sql<boolean>`(xmax = 0)` });
  if (!written) throw await whyNotReplaced(db, input.name, kind);
  return { certificate: await findCertificate(db, input.name), created: written.created };
}

/** The conflict an upload over an existing name met. */
async function whyNotReplaced(db: Db, name: string, kind: 'authority' | 'uploaded') {
  const existing = await findCertificate(db, name);
  if (existing.kind === 'self_signed' || existing.kind === 'acme') {
    return conflict(`certificate "${name}" is managed by the service (${existing.kind.replace('_', '-')}): it cannot be replaced by an upload`);
  }
  if (existing.kind === 'authority') {
    return conflict(`certificate "${name}" is a certificate authority: an upload does not replace it; delete it first (the certificates it issued are kept) or choose another name`);
  }
  if (kind === 'authority' && existing.assigned_listeners.length) {
    return conflict(`certificate "${name}" is served by the ${existing.assigned_listeners.join(' and ')} listener: a certificate authority cannot replace it; unassign it first`);
  }
  return conflict(`certificate "${name}" changed while it was being replaced: try again`);
}
