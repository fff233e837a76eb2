// Which projects a message is for: each recipient's domain, looked up among
// the domains whose ownership is proven (`servedBy`: a registration alone
// never receives mail), with what ingest needs to know per project in the
// same round trip (is the sender suppressed there, was this spool id stored,
// its spam thresholds and its routing rules).
import { sql, type SQLWrapper } from 'drizzle-orm';
import { domains, inboundEmails, projects, suppressions } from '@edgemail/schema';
import { addressDomain } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { servedBy, type NodeScope } from '../relay-nodes/domains.js';
import type { SpamThresholds } from './spam.js';
import { knownVersions, rulesFromRows, rulesLateral, rulesSelect, type RulesColumns } from '../inbound-rules/rules-cache.js';
import type { CompiledRules, IngestRule } from '../inbound-rules/evaluate.js';

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
/** The project's spam thresholds, as ShareRow's two columns in a select written as SQL (an aliased drizzle column there would print only its alias). */
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

/** One message whose projects are asked for: its spool id, bare envelope sender and recipients. */
export interface SharesWanted { spoolId: string; sender: string; rcptTo: string[] }

/**
 * Every message's projects in one statement: each recipient domain among the
 * proven ones the node serves (a project's node never reaches another
 * project), with the sender's suppression there, a record already stored for
 * the spool id, the spam thresholds, and the project's routing rules
 * (inbound-rules/rules-cache.ts: sent only when this isolate lacks their
 * version). One round trip for a message or a whole batch.
 */
export async function sharesAndRules(db: Db, messages: SharesWanted[], node: NodeScope): Promise<{ shares: ProjectShare[][]; rules: CompiledRules<IngestRule> }> {
  const wanted = messages.flatMap((m, i) => [...new Set(m.rcptTo.map(addressDomain))]
    .map((name) => sql`(${i}::int, ${m.spoolId}::text, ${m.sender.toLowerCase()}::text, ${name}::text)`));
  if (!wanted.length) return { shares: messages.map(() => []), rules: new Map() };
  const names = [...new Set(messages.flatMap((m) => m.rcptTo.map(addressDomain)))];
  const { rows } = await db.execute<ShareRow & RulesColumns & { i: number }>(sql`
    select m.i, ${domains.id} as "domainId", ${domains.projectId} as "projectId", ${domains.name} as name,
      ${senderSuppressedSql(domains.projectId, sql`m.sender`)} as suppressed,
      ${inboundEmails.id} as "storedId", ${inboundEmails.status} as "storedStatus",
      ${spamThresholdSelect}, ${rulesSelect(knownVersions(names))}
    from (values ${sql.join(wanted, sql`, `)}) as m(i, spool_id, sender, name)
    join ${domains} on ${domains.name} = m.name and ${servedBy(node)}
    left join ${inboundEmails} on ${inboundEmails.projectId} = ${domains.projectId} and ${inboundEmails.spoolId} = m.spool_id
    ${rulesLateral(sql`${domains.projectId}`)}`);
  const rules = await rulesFromRows(db, rows);
  return { shares: messages.map((m, i) => sharesFromRows(rows.filter((r) => Number(r.i) === i), m.sender, m.rcptTo)), rules };
}
