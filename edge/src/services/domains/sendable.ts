// What the send route and the relay claim route ask of a from-domain.
import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import { addressDomain, splitAddress, type Config } from '@edgemail/shared';
import type { AnyDb } from '../../db/any-db.js';
import type { DkimAlgorithm } from '../../crypto/dkim-keys.js';
import { unseal } from '../../crypto/seal.js';
import { firstRequiredProblem, type Verification } from './dns-records.js';
import { DKIM_SEAL_CONTEXT } from './keys.js';
import { ownedElsewhere, provenElsewhereProblem } from './ownership.js';

export interface SendingDomain {
  id: string;
  name: string;
  selector: string;
  algorithm: DkimAlgorithm;
  /** `domains.dkim_private_key_sealed`; open it with `dkimForJob`. */
  privateKeySealed: string;
}

export type SendingDomainVerdict = { ok: true; domain: SendingDomain } | { ok: false; problem: string };

/**
 * The domain of a from address (`news@acme.test` or `Acme <news@acme.test>`),
 * lower case without a trailing dot; null when there is no `@` with text on
 * both sides.
 */
export function domainOfAddress(from: string): string | null {
  const angle = /<([^<>]*)>\s*$/.exec(from);
  const address = (angle ? angle[1]! : from).trim();
  const parts = splitAddress(address);
  if (!parts?.local || !parts.domain) return null;
  return addressDomain(parts.domain);
}

const sendingColumns = {
  id: domains.id, name: domains.name, dkimSelector: domains.dkimSelector, dkimAlgorithm: domains.dkimAlgorithm,
  dkimPublicKey: domains.dkimPublicKey, dkimPrivateKeySealed: domains.dkimPrivateKeySealed,
  verification: domains.verification, verifiedAt: domains.verifiedAt, ownedElsewhere: ownedElsewhere(),
};

/**
 * The look-up behind `sendingDomain`, for several domain names at once, as a
 * query a caller can run inside a `db.batch`. Judge each name with
 * `judgeSendingDomain`.
 */
export const sendingDomainsQuery = (db: AnyDb, projectId: string, names: string[]) =>
  db.select(sendingColumns).from(domains).where(and(eq(domains.projectId, projectId), inArray(domains.name, names)));

export type SendingDomainRow = Awaited<ReturnType<typeof sendingDomainsQuery>>[number];

/**
 * Whether the project may send from `fromAddress`, given the project's domain
 * row of that name (undefined when it has none): the domain (exactly: a
 * subdomain is a domain of its own) must be the project's and verified. The
 * problem texts are the 400 messages of the send route.
 */
export function judgeSendingDomain(fromAddress: string, row: SendingDomainRow | undefined): SendingDomainVerdict {
  const name = domainOfAddress(fromAddress);
  if (!name) return { ok: false, problem: `from address ${JSON.stringify(fromAddress)} has no domain` };
  if (!row) return { ok: false, problem: `from domain ${name} is not a domain of this project` };

  const { dkimSelector: selector, dkimAlgorithm: algorithm, dkimPrivateKeySealed: privateKeySealed } = row;
  if (row.verifiedAt && selector && algorithm && privateKeySealed) {
    return { ok: true, domain: { id: row.id, name: row.name, selector, algorithm: algorithm as DkimAlgorithm, privateKeySealed } };
  }
  if (row.ownedElsewhere) return { ok: false, problem: `from domain ${name} is not this project's: ${provenElsewhereProblem(name)}` };
  const verification = row.verification as Verification | null;
  if (verification?.failed) {
    const problem = firstRequiredProblem(row, verification) ?? verification.failed.problem;
    return { ok: false, problem: `from domain ${name} failed verification: ${problem}` };
  }
  return { ok: false, problem: `from domain ${name} is not verified: publish its DNS records and POST /api/v1/domains/${row.id}/verify` };
}

/**
 * In SQL, on a `domains` row: what `judgeSendingDomain` accepts (verified,
 * with a DKIM key). The send's statement guards its inserts with it; the two
 * must agree.
 */
export const isSendable = (): SQL<boolean> => sql<boolean>`(${domains.verifiedAt} is not null
  and coalesce(${domains.dkimSelector}, '') <> '' and coalesce(${domains.dkimAlgorithm}, '') <> '' and coalesce(${domains.dkimPrivateKeySealed}, '') <> '')`;

/**
 * The `sendingDomainsQuery` rows as one JSON value, for a statement that does
 * more than this read (the send's); read it with `sendingDomainRows`.
 */
export const sendingDomainsJson = (projectId: string, names: string[]): SQL => sql`(
  select coalesce(json_agg(json_build_object(${sql.join(Object.entries(sendingColumns).map(([name, column]) => sql`${name}::text, ${column}`), sql`, `)})), '[]'::json)
  from ${domains} where ${and(eq(domains.projectId, projectId), inArray(domains.name, names))})`;

/** The rows of a `sendingDomainsJson` value, as `sendingDomainsQuery` gives them. */
export const sendingDomainRows = (json: unknown): SendingDomainRow[] =>
  (json as (Omit<SendingDomainRow, 'verifiedAt'> & { verifiedAt: string | null })[])
    .map((row) => ({ ...row, verifiedAt: row.verifiedAt === null ? null : new Date(row.verifiedAt) }));

/**
 * Whether the project may send from `fromAddress` (`judgeSendingDomain`), looked up now.
 *
 * @example
 * const from = await sendingDomain(db, projectId, 'Acme <news@acme.test>');
 * if (!from.ok) throw invalid(from.problem, { from: from.problem });
 */
export async function sendingDomain(db: AnyDb, projectId: string, fromAddress: string): Promise<SendingDomainVerdict> {
  const name = domainOfAddress(fromAddress);
  const [row] = name ? await sendingDomainsQuery(db, projectId, [name]) : [];
  return judgeSendingDomain(fromAddress, row);
}

export interface JobDkim {
  domain: string;
  selector: string;
  algorithm: DkimAlgorithm;
  /** PKCS#8 PEM, opened from the sealed column: for the claiming relay node only. */
  private_key_pem: string;
}

/**
 * The `dkim` of a relay job (docs/sending.md, "Relay protocol: outbound"):
 * the domain's key, unsealed. Null for a domain without a key. Throws
 * SealError when the key cannot be opened (another encryption key): mail is
 * never sent unsigned by accident.
 *
 * @param row the domain's columns, as a join from `outbound_messages.domain_id` selects them
 */
export async function dkimForJob(
  settings: Pick<Config, 'database.crypto.encryption_key'>,
  row: Pick<typeof domains.$inferSelect, 'name' | 'dkimSelector' | 'dkimAlgorithm' | 'dkimPrivateKeySealed'>,
): Promise<JobDkim | null> {
  if (!row.dkimSelector || !row.dkimAlgorithm || !row.dkimPrivateKeySealed) return null;
  return {
    domain: row.name,
    selector: row.dkimSelector,
    algorithm: row.dkimAlgorithm as DkimAlgorithm,
    private_key_pem: await unseal(row.dkimPrivateKeySealed, settings['database.crypto.encryption_key'], DKIM_SEAL_CONTEXT),
  };
}
