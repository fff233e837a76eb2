// Who owns a domain name: the one registration whose DKIM key a check found
// published (docs/inbound.md, "Domain ownership"). Another project's key can
// only get into the name's DNS by whoever controls that DNS, so the proof is
// unforgeable by another tenant, and it is the record the owner publishes for
// sending anyway: one step.
import { and, eq, isNotNull, ne, sql, type SQL } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { AnyDb } from '../../db/any-db.js';
import { resolveDns } from '../../net/doh.js';
import { expectedRecords, judge } from './dns-records.js';

/**
 * The owner of `domains.name` has no standing proof: the last check found its
 * DKIM record gone, or it has no key at all (registered before sending
 * existed, kept by migration 0007). Ownership is sticky (its mail keeps
 * arriving) until another project proves the name, which may then register
 * and take it.
 */
const lapsed = () => sql`(${domains.dkimPublicKey} is null or coalesce(${domains.verification}->'dkim'->>'ok', '') = 'false')`;

/**
 * True when another registration (so another project's) of this row's name
 * owns it. The outer row is named in full: drizzle leaves a single table's
 * columns unqualified, which inside the subquery would mean its own row.
 */
export const ownedElsewhere = (): SQL<boolean> => sql<boolean>`exists (
  select 1 from ${domains} as other_registration where other_registration.name = "domains".name
    and other_registration.id <> "domains".id and other_registration.ownership_proven_at is not null)`;

/** The message of a registration whose name another project has proven. */
export const provenElsewhereProblem = (name: string) => `ownership of ${name} was proven by another project`;

/**
 * Why `projectId` may not register `name`, or null: the project has it
 * already, or another project holds it with a proof that still stands (a
 * lapsed holder does not block). The 409 messages of `POST /api/v1/domains`.
 */
export async function registrationConflict(db: AnyDb, projectId: string, name: string): Promise<string | null> {
  const [row] = await db.select({
    mine: sql<boolean>`bool_or(${domains.projectId} = ${projectId})`,
    held: sql<boolean>`bool_or(${domains.projectId} <> ${projectId} and ${domains.ownershipProvenAt} is not null and not ${lapsed()})`,
  }).from(domains).where(eq(domains.name, name));
  if (row?.mine) return `domain ${name} is already registered in this project`;
  if (row?.held) return `domain ${name} is already registered by another project that proved its ownership`;
  return null;
}

/** What a holder's DKIM record is made from. */
export type Holder = Pick<typeof domains.$inferSelect, 'id' | 'name' | 'dkimSelector' | 'dkimAlgorithm' | 'dkimPublicKey'>;

/** The registration of `name`, other than `claimantId`, that holds the name; null when none does. */
export async function provenHolder(db: AnyDb, name: string, claimantId: string): Promise<Holder | null> {
  const [holder] = await db.select({
    id: domains.id, name: domains.name, dkimSelector: domains.dkimSelector, dkimAlgorithm: domains.dkimAlgorithm, dkimPublicKey: domains.dkimPublicKey,
  }).from(domains).where(and(eq(domains.name, name), ne(domains.id, claimantId), isNotNull(domains.ownershipProvenAt)));
  return holder ?? null;
}

/**
 * Whether `holder`'s own DKIM record is published, asked now (no cached
 * answer) when another registration has just found its own: a name that
 * changed hands moves at the new owner's check, not after the old owner's
 * next one. A holder without a key has no record to find.
 */
export async function holderRecordStands(dohUrl: string, host: string, holder: Holder): Promise<{ ok: true; stands: boolean } | { ok: false; problem: string }> {
  const record = expectedRecords(holder, host).find((r) => r.purpose === 'dkim');
  if (!record) return { ok: true, stands: false };
  const answer = await resolveDns(record.name, record.type, { dohUrl, cache: false });
  if (answer.status === 'error') return { ok: false, problem: answer.problem };
  return { ok: true, stands: judge(record, answer.status === 'ok' ? answer.records : []).ok };
}

/**
 * A data-modifying CTE for the claim's UPDATE: frees the name from the holder
 * `holderId` (null: from nobody) in the same statement that claims it, so the
 * name is never without an owner in between. The holder may no longer send
 * from it either (verified needs the name to be its own).
 */
export const releaseHolder = (db: AnyDb, holderId: string | null) => db.$with('released_holder', { id: domains.id }).as(sql`
  update ${domains} set "ownership_proven_at" = null, "verified_at" = null
  where "id" = ${holderId}::uuid and "ownership_proven_at" is not null returning "id"`);
