// Listener certificate resolution, step (3): the self-signed pair made on
// first use and shared by every node. The first node to be told "no
// certificate" generates a pair and offers it; the partial unique index
// (one `self_signed` row) lets exactly one offer in, and every node is then
// answered with that one (until it nears its end: see offerSelfSigned). The
// private half is stored sealed.
import { eq, sql } from 'drizzle-orm';
import { certificates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { seal, unseal } from '../../crypto/seal.js';

/** The additional data the private key is sealed with: a value sealed for another column will not open here. */
export const PRIVATE_KEY_CONTEXT = 'certificates.private_key';
const SELF_SIGNED_NAME = 'self-signed';

/** The metadata columns, as inspectPair reads them (kept structural: this file is also loaded outside the Worker). */
export interface StoredMeta {
  subject: string; issuerSubject: string; hosts: string[]; algorithm: string; keySize: number;
  serialNumber: string; fingerprintSha256: string; notBefore: Date;
}

export interface ListenerCertificate {
  certificate: string;
  private_key: string;
  source: 'self_signed';
  not_after: string;
}

async function stored(db: Db, encryptionKey: string): Promise<ListenerCertificate | null> {
  const [row] = await db
    .select({ pem: certificates.certificatePem, sealed: certificates.privateKeySealed, notAfter: certificates.notAfter })
    .from(certificates)
    .where(eq(certificates.kind, 'self_signed'));
  if (!row) return null;
  return {
    certificate: row.pem,
    private_key: await unseal(row.sealed, encryptionKey, PRIVATE_KEY_CONTEXT),
    source: 'self_signed',
    not_after: row.notAfter.toISOString(),
  };
}

/** The certificate a listener presents; null until the self-signed pair exists. */
export function findListenerCertificate(db: Db, encryptionKey: string): Promise<ListenerCertificate | null> {
  return stored(db, encryptionKey);
}

/** A stored pair this close to its end may be replaced by a fresher offer (renewal). */
export const RENEWAL_WINDOW_DAYS = 30;

/**
 * Stores the offered pair unless one exists, then answers with the stored one
 * (first writer wins). The one exception is renewal: an offer that outlives a
 * stored pair within RENEWAL_WINDOW_DAYS of its end replaces it; the first
 * such offer moves the stored end out of the window, so later ones lose.
 */
export async function offerSelfSigned(
  db: Db, encryptionKey: string, offer: { certificate: string; privateKey: string; notAfter: Date; meta?: StoredMeta },
): Promise<ListenerCertificate> {
  const sealed = await seal(offer.privateKey, encryptionKey, PRIVATE_KEY_CONTEXT);
  const m = offer.meta;
  // The columns listing shows without parsing (as for every stored certificate).
  const columns = {
    certificatePem: offer.certificate, privateKeySealed: sealed, notAfter: offer.notAfter,
    ...(m ? {
      subject: m.subject, issuerSubject: m.issuerSubject, hosts: m.hosts, algorithm: m.algorithm, keySize: m.keySize,
      serialNumber: m.serialNumber, fingerprintSha256: m.fingerprintSha256, notBefore: m.notBefore,
    } : {}),
  };
  await db.insert(certificates)
    .values({ name: SELF_SIGNED_NAME, kind: 'self_signed', ...columns })
    .onConflictDoUpdate({
      target: certificates.kind,
      targetWhere: sql`${certificates.kind} = 'self_signed'`,
      set: { ...columns, createdAt: sql`now()`, updatedAt: sql`now()` },
      setWhere: sql`${certificates.notAfter} < now() + make_interval(days => ${RENEWAL_WINDOW_DAYS}) and excluded.not_after > ${certificates.notAfter}`,
    });
  const pair = await stored(db, encryptionKey);
  if (!pair) throw new Error('self-signed certificate missing right after it was offered');
  return pair;
}
