// DELETE /api/v1/admin/certificates/{name}. Refused while a listener with TLS
// on is assigned the certificate; an assignment on a listener with TLS off is
// cleared with it (listener_certificates cascades). Certificates an authority
// issued are kept (issuer_id set null).
import { and, eq, inArray, notExists } from 'drizzle-orm';
import { certificates, listenerCertificates } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { conflict } from '../errors.js';
import { listenerTlsEnabled, TLS_LISTENERS } from './listeners.js';
import { findCertificate } from './record.js';

export async function deleteCertificate(db: Db, config: Config, name: string): Promise<void> {
  const serving = TLS_LISTENERS.filter((l) => listenerTlsEnabled(config, l));
  const servedBy = db.select({ listener: listenerCertificates.listener }).from(listenerCertificates)
    .where(and(eq(listenerCertificates.certificateId, certificates.id), inArray(listenerCertificates.listener, serving)));
  // One statement: an assignment made between a check and the delete cannot slip through.
  const deleted = await db.delete(certificates)
    .where(and(eq(certificates.name, name), serving.length ? notExists(servedBy) : undefined))
    .returning({ id: certificates.id });
  if (deleted.length) return;
  const existing = await findCertificate(db, name); // not_found when there was nothing to delete
  const listeners = existing.assigned_listeners.filter((l) => (serving as string[]).includes(l));
  throw conflict(`certificate "${name}" is assigned to the ${listeners.join(' and ') || 'a'} listener, which has TLS on: assign another certificate or unassign it first`);
}
