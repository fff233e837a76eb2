// What the writers of the store share: a name's presence, the refusal for a
// taken name, and the metadata columns read from a certificate.
import { eq } from 'drizzle-orm';
import { certificates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { conflict } from '../errors.js';
import type { CertificateMeta } from './inspect.js';
import { SELF_SIGNED_NAME } from '../../contracts/certificate.js';

export const nameTaken = (name: string) =>
  conflict(`a certificate named "${name}" already exists: choose another name (a generated certificate never replaces one)`);

/** The service's own pair: an operator's write under this name is refused (409), even before the pair exists. */
export const serviceManaged = (name: string) =>
  conflict(`"${name}" is the service's own certificate (managed by it): choose another name`);

/** Whether `name` is taken; refuses the service's own name outright. */
export async function nameExists(db: Db, name: string): Promise<boolean> {
  if (name === SELF_SIGNED_NAME) throw serviceManaged(name);
  const [row] = await db.select({ id: certificates.id }).from(certificates).where(eq(certificates.name, name));
  return !!row;
}

/** The metadata columns of a certificate read by describeCertificate. */
export function metaColumns(meta: CertificateMeta) {
  return {
    subject: meta.subject,
    issuerSubject: meta.issuerSubject,
    hosts: meta.hosts,
    algorithm: meta.algorithm,
    keySize: meta.keySize,
    serialNumber: meta.serialNumber,
    fingerprintSha256: meta.fingerprintSha256,
    notBefore: meta.notBefore,
    notAfter: meta.notAfter,
  };
}
