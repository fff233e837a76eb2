// Renewal of the certificates this service issued (kind `issued`), run by the
// hourly cron: one whose end is within RENEWAL_WINDOW_DAYS (or a third of its
// lifetime, when shorter) is re-issued by
// the same authority for the same hosts and algorithm and lifetime, in place
// (same row, name and id, so listener assignments follow; relay nodes see the
// bumped TLS generation). Skipped: an issuer that is gone, expired, or would
// not extend the end (the new one is cut to the issuer's end). Uploaded and
// ACME certificates are not renewed here.
import { and, asc, eq, isNotNull, sql } from 'drizzle-orm';
import { certificates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { LEAF_DAYS_MAX } from '../../contracts/certificate.js';
import { authorityById } from './authority.js';
import { issueColumns } from './generate.js';
import { RENEWAL_WINDOW_DAYS } from './self-signed.js';

const DAY_MS = 86_400_000;
/** Renewals per run: RSA keys take a while; the rest wait for the next hour. */
export const RENEWALS_PER_RUN = 20;

export interface RenewalReport { renewed: string[]; skipped: Array<{ name: string; reason: string }> }

export async function renewIssuedCertificates(db: Db, encryptionKey: string, now = new Date()): Promise<RenewalReport> {
  const due = await db.select({
    id: certificates.id, name: certificates.name, issuerId: certificates.issuerId, hosts: certificates.hosts,
    algorithm: certificates.algorithm, notBefore: certificates.notBefore, notAfter: certificates.notAfter,
    fingerprint: certificates.fingerprintSha256,
  }).from(certificates)
    .where(and(
      eq(certificates.kind, 'issued'),
      isNotNull(certificates.issuerId),
      // Due within the window, or within a third of its lifetime when that is shorter
      // (a 7-day certificate is renewed with 2 days left, not on every run).
      sql`${certificates.notAfter} < ${now.toISOString()}::timestamptz + least(make_interval(days => ${RENEWAL_WINDOW_DAYS}), (${certificates.notAfter} - coalesce(${certificates.notBefore}, ${certificates.createdAt})) / 3)`,
    ))
    .orderBy(asc(certificates.notAfter))
    .limit(RENEWALS_PER_RUN);
  const report: RenewalReport = { renewed: [], skipped: [] };
  for (const row of due) {
    try {
      await renewOne(db, encryptionKey, row, now, report);
    } catch (e) {
      report.skipped.push({ name: row.name, reason: `failed: ${e instanceof Error ? e.message : String(e)}` });
    }
  }
  return report;
}

type DueRow = { id: string; name: string; issuerId: string | null; hosts: string[]; algorithm: string; notBefore: Date | null; notAfter: Date; fingerprint: string };

async function renewOne(db: Db, encryptionKey: string, row: DueRow, now: Date, report: RenewalReport): Promise<void> {
  const authority = await authorityById(db, encryptionKey, row.issuerId!);
  if (!authority) { report.skipped.push({ name: row.name, reason: 'its issuer is no longer an authority' }); return; }
  if (authority.notAfter.getTime() <= now.getTime()) { report.skipped.push({ name: row.name, reason: `its issuer "${authority.name}" has expired` }); return; }
  if (authority.notAfter.getTime() <= row.notAfter.getTime()) { report.skipped.push({ name: row.name, reason: `its issuer "${authority.name}" ends no later than it does` }); return; }
  if (row.algorithm !== 'rsa' && row.algorithm !== 'ecdsa') { report.skipped.push({ name: row.name, reason: `algorithm ${row.algorithm} is not issued here` }); return; }
  // The lifetime it was issued with (whole days, at most the ceiling).
  const lifetime = row.notBefore ? Math.round((row.notAfter.getTime() - row.notBefore.getTime()) / DAY_MS) : LEAF_DAYS_MAX;
  const days = Math.min(Math.max(lifetime, 1), LEAF_DAYS_MAX);
  const issued = await issueColumns(authority, encryptionKey, { hosts: row.hosts, algorithm: row.algorithm, days }, now);
  // Only the certificate this run read: an upload over it in the meantime wins.
  const updated = await db.update(certificates).set({ ...issued.columns, updatedAt: sql`now()` })
    .where(and(eq(certificates.id, row.id), eq(certificates.kind, 'issued'), eq(certificates.fingerprintSha256, row.fingerprint)))
    .returning({ id: certificates.id });
  if (updated.length) report.renewed.push(row.name);
  else report.skipped.push({ name: row.name, reason: 'it changed during renewal' });
}
