// One check of a domain's DNS records, shared by `POST /domains/{id}/verify`
// and the periodic re-verification: ask the resolver for every record, judge
// each, and store the verdicts in one UPDATE. A resolver that cannot answer
// changes nothing.
import { and, eq, sql, type AnyColumn } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { AnyDb } from '../../db/any-db.js';
import { resolveDns } from '../../net/doh.js';
import { expectedRecords, firstRequiredProblem, judge, publicHost, type Verification } from './dns-records.js';
import { newDomainKey } from './keys.js';
import { holderRecordStands, ownedElsewhere, provenHolder, releaseHolder } from './ownership.js';
import { isUniqueViolation } from '../../db/errors.js';
import { domainColumns, type DomainRow } from './present.js';

export type CheckSettings = Pick<Config, 'dns.doh_url' | 'server.public_url' | 'database.crypto.encryption_key'>;

export type CheckOutcome =
  /** The stored result; null when the domain was deleted meanwhile. */
  | { ok: true; row: DomainRow | null }
  /** The resolver did not answer one of the questions: nothing was stored. */
  | { ok: false; problem: string };

/**
 * Checks `row`'s records now (no cached answers) and stores the verdicts,
 * `last_checked_at`, `ownership_proven_at` (set when its DKIM record is found
 * and no other project holds the name, or the holder's own record is gone when
 * asked right then; then kept), and `verified_at` (kept
 * while every required record passes and the name is this registration's, set
 * when they first all do, cleared when one fails). A domain made before
 * sending existed gets its DKIM key here, in the same UPDATE.
 */
export async function checkDomain(db: AnyDb, settings: CheckSettings, row: DomainRow): Promise<CheckOutcome> {
  const key = row.dkimPublicKey ? null : await newDomainKey(settings['database.crypto.encryption_key']);
  const facts = key ? { ...row, ...key } : row;
  const host = publicHost(settings);
  const expected = expectedRecords(facts, host);
  const answers = await Promise.all(expected.map((r) => resolveDns(r.name, r.type, { dohUrl: settings['dns.doh_url'], cache: false })));
  const failure = answers.find((a) => a.status === 'error');
  if (failure?.status === 'error') return { ok: false, problem: failure.problem };

  const verification: Verification = {};
  expected.forEach((record, i) => {
    const answer = answers[i]!;
    verification[record.purpose] = judge(record, answer.status === 'ok' ? answer.records : []);
  });
  const passed = expected.every((r) => !r.required || verification[r.purpose]!.ok);
  const previously = row.verification as Verification | null;
  if (!passed && (row.verifiedAt || previously?.failed)) {
    // Lost since it was verified: `failed` (not `pending`) until it passes again.
    verification.failed = { ok: false, problem: firstRequiredProblem(facts, verification)! };
  }

  const dkimFound = verification.dkim?.ok === true;
  // Its key is found and another project holds the name: the holder's own
  // record is asked now. Gone, the holder yields the name in the claim's UPDATE.
  let yielding: string | null = null;
  const holder = dkimFound && !row.ownershipProvenAt ? await provenHolder(db, row.name, row.id) : null;
  if (holder) {
    const stands = await holderRecordStands(settings['dns.doh_url'], host, holder);
    if (!stands.ok) return { ok: false, problem: stands.problem };
    if (!stands.stands) yielding = holder.id;
  }
  const released = releaseHolder(db, yielding);
  // The name is this registration's once proven (sticky), or now when its key
  // is found and no other project holds the name, or the holder yielded it in
  // this statement (whose snapshot still shows the holder).
  const owns = sql`(${domains.ownershipProvenAt} IS NOT NULL OR (${sql.raw(String(dkimFound))}
    AND (NOT ${ownedElsewhere()} OR exists (select 1 from ${released}))))`;

  // A concurrent first check may have stored a key already: the first one stays.
  const keep = (column: AnyColumn, value: string) =>
    sql`CASE WHEN ${domains.dkimPrivateKeySealed} IS NULL THEN ${value} ELSE ${column} END`;
  const update = () => db.with(released).update(domains)
    .set({
      ...(key ? {
        dkimSelector: keep(domains.dkimSelector, key.dkimSelector),
        dkimAlgorithm: keep(domains.dkimAlgorithm, key.dkimAlgorithm),
        dkimPublicKey: keep(domains.dkimPublicKey, key.dkimPublicKey),
        dkimPrivateKeySealed: keep(domains.dkimPrivateKeySealed, key.dkimPrivateKeySealed),
      } : {}),
      verification,
      ownershipProvenAt: sql`CASE WHEN ${owns} THEN coalesce(${domains.ownershipProvenAt}, now()) END`,
      verifiedAt: passed ? sql`CASE WHEN ${owns} THEN coalesce(${domains.verifiedAt}, now()) END` : null,
      lastCheckedAt: sql`now()`,
    })
    .where(and(eq(domains.projectId, row.projectId), eq(domains.id, row.id)))
    .returning(domainColumns);
  let stored;
  try {
    [stored] = await update();
  } catch (e) {
    // Another project proved the name at the same moment and won the unique
    // index: checked again, this registration sees that owner.
    if (!isUniqueViolation(e)) throw e;
    [stored] = await update();
  }
  // RETURNING saw the statement's snapshot, the yielded holder still in it: read the row as it is now.
  if (yielding && stored) [stored] = await db.select(domainColumns).from(domains).where(and(eq(domains.projectId, row.projectId), eq(domains.id, row.id)));
  return { ok: true, row: stored ?? null };
}
