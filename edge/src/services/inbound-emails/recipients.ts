// Which projects a message is for: each recipient's domain, looked up among
// the domains whose ownership is proven (`servedBy`: a registration alone
// never receives mail), with what ingest needs to know per project in the
// same round trip (is the sender suppressed there, was this spool id stored).
import { and, eq, inArray, sql, type SQLWrapper } from 'drizzle-orm';
import { domains, inboundEmails, projects, suppressions } from '@edgemail/schema';
import { addressDomain } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { servedBy, type NodeScope } from '../relay-nodes/domains.js';
import type { SpamThresholds } from './spam.js';

export interface ProjectShare {
  projectId: string;
  /** The domain of the project's first recipient. */
  domainId: string;
  /** The message's recipients in this project's domains, in envelope order. */
  recipients: string[];
  senderSuppressed: boolean;
  /** The record already stored for this spool id, if any. */
  stored: { id: string; status: 'received' | 'rejected' | 'failed' } | null;
  /** The project's thresholds on rspamd's score (docs/inbound.md, Spam scoring). */
  spam: SpamThresholds;
}

/**
 * Whether `sender` (bare, lower case) is on the suppression list of the
 * project `projectId` names, in SQL. An entry past its expires_at no longer applies;
 * an entry of one stream (an unsubscribe from broadcast mail) does not refuse the sender's mail.
 */
export const senderSuppressedSql = (projectId: SQLWrapper, sender: SQLWrapper | string) => sql<boolean>`exists (select 1 from ${suppressions}
  where ${suppressions.projectId} = ${projectId} and ${suppressions.address} = ${sender}
  and ${suppressions.stream} = ''
  and (${suppressions.expiresAt} is null or ${suppressions.expiresAt} > now()))`;

const spamRejectScoreOf = sql<number | null>`(select ${projects.inboundSpamRejectScore} from ${projects} where ${projects.id} = ${domains.projectId})`;
const spamMarkScoreOf = sql<number | null>`(select ${projects.inboundSpamMarkScore} from ${projects} where ${projects.id} = ${domains.projectId})`;
/** The project's spam thresholds, as ShareRow's columns (a scalar subquery: one row per project). */
export const spamThresholdColumns = { spamRejectScore: spamRejectScoreOf.as('spamRejectScore'), spamMarkScore: spamMarkScoreOf.as('spamMarkScore') };
/** The same two columns in a select written as SQL (an aliased column there would print only its alias). */
export const spamThresholdSelect = sql`${spamRejectScoreOf} as "spamRejectScore", ${spamMarkScoreOf} as "spamMarkScore"`;

/** A row of the domains a message's recipients are in, with what ingest needs per project. */
export type ShareRow = {
  domainId: string; projectId: string; name: string; suppressed: boolean;
  storedId: string | null; storedStatus: NonNullable<ProjectShare['stored']>['status'] | null;
  spamRejectScore?: number | null; spamMarkScore?: number | null;
};

/** One share per project, its recipients in envelope order, from the rows of the recipients' domains. */
export function sharesFromRows(rows: ShareRow[], sender: string, rcptTo: string[]): ProjectShare[] {
  const byName = new Map(rows.map((r) => [r.name, r]));
  const shares = new Map<string, ProjectShare>();
  for (const address of rcptTo) {
    const row = byName.get(addressDomain(address));
    if (!row) continue;
    let share = shares.get(row.projectId);
    if (!share) {
      share = {
        projectId: row.projectId, domainId: row.domainId, recipients: [],
        senderSuppressed: sender !== '' && row.suppressed,
        stored: row.storedId ? { id: row.storedId, status: row.storedStatus! } : null,
        spam: { reject: row.spamRejectScore ?? null, mark: row.spamMarkScore ?? null },
      };
      shares.set(row.projectId, share);
    }
    if (!share.recipients.includes(address)) share.recipients.push(address);
  }
  return [...shares.values()];
}

/**
 * @param sender the bare envelope sender; empty (the null sender) is never suppressed
 */
export async function projectShares(db: Db, spoolId: string, sender: string, rcptTo: string[], node: NodeScope): Promise<ProjectShare[]> {
  const names = [...new Set(rcptTo.map(addressDomain))];
  const rows = await db
    .select({
      domainId: domains.id, projectId: domains.projectId, name: domains.name,
      suppressed: senderSuppressedSql(domains.projectId, sender.toLowerCase()),
      storedId: inboundEmails.id, storedStatus: inboundEmails.status,
      ...spamThresholdColumns,
    })
    .from(domains)
    .leftJoin(inboundEmails, and(eq(inboundEmails.projectId, domains.projectId), eq(inboundEmails.spoolId, spoolId)))
    // A node stores mail only for the domains it serves (proven ones): a project's node never reaches another project.
    .where(and(inArray(domains.name, names), servedBy(node)));
  return sharesFromRows(rows, sender, rcptTo);
}
