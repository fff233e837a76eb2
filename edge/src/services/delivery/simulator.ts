// Simulator addresses (docs/sending.md, "Simulator addresses"): `delivered@`,
// `bounce@`, `complaint@` and `defer@` at `simulator.<public host>`. A relay
// node claims them like any recipient, but the claim never hands them out:
// the edge settles them at once with the result a receiving server would
// have given, through the same statement a node's report runs
// (`recordResults`), and, for a bounce or a complaint, the report that
// would have come back (`recordBounces`, source `simulator`), both in one
// transaction: a Worker that dies between them cannot leave an email `sent`
// whose bounce never comes. So the email log, attempts, suppressions, bounce
// records and webhook events are the real ones, and nothing is delivered.
import { parseIp, type Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import type { OutboundResultInput } from '../../contracts/relay-outbound.js';
import { sql } from 'drizzle-orm';
import { emailAttempts } from '@edgemail/schema';
import { bouncesStatement } from './bounces/record.js';
import type { BounceReport } from './bounces/report.js';
import { publicHost } from '../domains/dns-records.js';
import type { ClaimedRow } from './claim.js';
import { resultsStatement } from './results.js';
import type { OutboxRows } from '../emails/events.js';

export const SIMULATOR_ADDRESSES = ['delivered', 'bounce', 'complaint', 'defer'] as const;
export type SimulatorAddress = (typeof SIMULATOR_ADDRESSES)[number];

/**
 * `simulator.<host of server.public_url>`, or `simulator.localhost` when that
 * host is an IP address (`pnpm dev`, the tests) or a single label: a domain
 * needs a name, and `.localhost` never exists on the Internet (RFC 6761).
 *
 * @example simulatorDomain({ 'server.public_url': 'https://mail.example.com' }) // 'simulator.mail.example.com'
 */
export function simulatorDomain(settings: Pick<Config, 'server.public_url'>): string {
  const host = publicHost(settings).replace(/\.$/, '');
  return parseIp(host) || !host.includes('.') ? 'simulator.localhost' : `simulator.${host}`;
}

/**
 * Which simulator address `recipient` is (its local part up to a `+`:
 * `bounce+42@…` is `bounce`), `unknown` for another mailbox of the simulator
 * domain, or null when it is not at the simulator domain.
 */
export function simulatorAddressOf(recipient: string, domain: string): SimulatorAddress | 'unknown' | null {
  const at = recipient.lastIndexOf('@');
  if (at < 0 || recipient.slice(at + 1).toLowerCase() !== domain) return null;
  const mailbox = recipient.slice(0, at).split('+')[0]!.toLowerCase();
  return (SIMULATOR_ADDRESSES as readonly string[]).includes(mailbox) ? mailbox as SimulatorAddress : 'unknown';
}

/** The result a receiving server would have given (`server` is `simulator`; no time passes). */
export function simulatedResult(row: Pick<ClaimedRow, 'id' | 'attempts' | 'recipient'>, kind: SimulatorAddress | 'unknown'): OutboundResultInput {
  const base = { email_id: row.id, attempt: row.attempts, server: 'simulator', started_at: new Date().toISOString(), duration_ms: 0 };
  const to = `<${row.recipient}>`;
  switch (kind) {
    case 'defer':
      return { ...base, outcome: 'deferred', smtp_code: 451, reply: `451 4.4.1 ${to}: simulated deferral (the simulator always defers ${to}; tried again later)` };
    case 'unknown':
      return { ...base, outcome: 'failed', smtp_code: 550, reply: `550 5.1.1 ${to}: no such simulator address (delivered, bounce, complaint or defer, each with an optional +label)` };
    default:
      // `bounce` and `complaint` are accepted first, as the receiving server does before it reports.
      return { ...base, outcome: 'sent', smtp_code: 250, reply: `250 2.0.0 ${to}: accepted by the simulator (nothing was delivered)` };
  }
}

/** The report that comes back after a simulated `bounce@` or `complaint@` was accepted. */
export function simulatedReport(row: Pick<ClaimedRow, 'id' | 'recipient' | 'message_id'>, kind: 'bounce' | 'complaint', domain: string): BounceReport {
  const common = { emailId: row.id, source: 'simulator' as const, sourceRef: `simulator:${row.id}`, remoteMta: domain, originalMessageId: row.message_id };
  return kind === 'bounce'
    ? { ...common, type: 'hard', smtpCode: 550, status: '5.1.1', diagnostic: `smtp; 550 5.1.1 <${row.recipient}>: simulated hard bounce (no such user)`, feedbackType: null }
    : { ...common, type: 'complaint', smtpCode: null, status: null, diagnostic: null, feedbackType: 'abuse' };
}

type Settings = Pick<Config, 'server.public_url' | 'outbound.retry_delay' | 'outbound.max_age'>;

/** The claimed rows split into those at the simulator domain and the rest (handed out as jobs). */
export function splitSimulated(settings: Pick<Config, 'server.public_url'>, rows: ClaimedRow[]) {
  const domain = simulatorDomain(settings);
  const simulated: { row: ClaimedRow; kind: SimulatorAddress | 'unknown' }[] = [];
  const real: ClaimedRow[] = [];
  for (const row of rows) {
    const kind = simulatorAddressOf(row.recipient, domain);
    if (kind) simulated.push({ row, kind });
    else real.push(row);
  }
  return { domain, simulated, real };
}

/**
 * Settles claimed simulator rows (still leased to `nodeId`): their results as
 * a node's report, and the bounce and complaint reports of those that
 * counted, in one transaction. Which counted is known only inside it, so the
 * bounce statement keeps a report only when the results statement before it
 * wrote this attempt's `sent` record (by this node, from the simulator); a
 * failure of either rolls both back (the caller returns the rows to the
 * queue, to be settled again). Answers the outbox rows written, by project,
 * for the hand-over.
 */
export async function settleSimulated(
  db: Db, settings: Settings, nodeId: string, domain: string, simulated: { row: ClaimedRow; kind: SimulatorAddress | 'unknown' }[],
): Promise<Map<string, OutboxRows>[]> {
  if (!simulated.length) return [];
  const results = resultsStatement(db, settings, nodeId, simulated.map(({ row, kind }) => simulatedResult(row, kind)));
  const reports = simulated.flatMap(({ row, kind }) => (kind === 'bounce' || kind === 'complaint') ? [simulatedReport(row, kind, domain)] : []);
  if (!reports.length) {
    const { rows: [row] } = await results.query;
    return [results.read(row).events];
  }
  const bounces = bouncesStatement(db, reports, sql`exists (
    select 1 from ${emailAttempts} a
    where a.email_id = e.id and a.attempt = e.attempts and a.node_id = ${nodeId} and a.server = 'simulator' and a.outcome = 'sent')`);
  const [resultsAnswer, bouncesAnswer] = await db.batch([results.query, bounces.query]);
  return [results.read(resultsAnswer.rows[0]).events, bounces.read(bouncesAnswer.rows[0]).events];
}
