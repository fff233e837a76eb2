// Who owns a domain name: the one registration whose DKIM key a check found
// published (docs/inbound.md, "Domain ownership"). Another project's key can
// only get into the name's DNS by whoever controls that DNS, so the proof is
// unforgeable by another tenant, and it is the record the owner publishes for
// sending anyway: one step.
import { and, eq, isNotNull, ne, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { AnyDb } from '../../db/any-db.js';

/**
 * The owner of `domains.name` lost its proof: the last check found its DKIM
 * record gone. Ownership is sticky (its mail keeps arriving) until another
 * project proves the name, which may then register and take it.
 */
const lapsed = (verification: AnyColumn) => sql`coalesce(${verification}->'dkim'->>'ok', '') = 'false'`;

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
    held: sql<boolean>`bool_or(${domains.projectId} <> ${projectId} and ${domains.ownershipProvenAt} is not null and not ${lapsed(domains.verification)})`,
  }).from(domains).where(eq(domains.name, name));
  if (row?.mine) return `domain ${name} is already registered in this project`;
  if (row?.held) return `domain ${name} is already registered by another project that proved its ownership`;
  return null;
}

/**
 * Before a registration whose DKIM record was just found claims its name:
 * releases the name from an owner whose proof has lapsed. The claim follows in
 * the check's UPDATE; should it never come (a crash between the two), the
 * name is unowned until the next check, which the lapsed owner could not pass
 * either.
 */
export async function releaseLapsedOwner(db: AnyDb, name: string, claimantId: string): Promise<void> {
  await db.update(domains).set({ ownershipProvenAt: null })
    .where(and(eq(domains.name, name), ne(domains.id, claimantId), isNotNull(domains.ownershipProvenAt), lapsed(domains.verification)));
}
