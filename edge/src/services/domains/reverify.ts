// Periodic re-verification (called by the Worker's cron handler): a domain
// that loses its records stops being `verified` within about this interval,
// and one whose records appear is verified without anyone asking.
import { asc, lt, sql } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { AnyDb } from '../../db/any-db.js';
import { checkDomain, type CheckSettings } from './check.js';
import { domainColumns, domainStatus } from './present.js';

/** How old a check may get before the domain is checked again. */
export const REVERIFY_INTERVAL_HOURS = 6;
/** Domains checked at once within one run (four DNS questions each). */
const CONCURRENCY = 4;

export interface ReverifyReport {
  checked: number;
  /** Status after the check, by status. */
  verified: number;
  pending: number;
  failed: number;
  /** Domains the resolver could not answer for: unchanged, retried on a later run. */
  errors: { domain: string; problem: string }[];
}

/**
 * Re-checks up to `limit` domains whose last check (or, never checked, whose
 * registration) is older than 6 hours, oldest first.
 *
 * @example
 * const report = await reverifyDomains(db, config, 50);
 * if (report.checked) console.log(`domains re-verified: ${report.checked}, failed ${report.failed}`);
 */
export async function reverifyDomains(db: AnyDb, settings: CheckSettings, limit: number): Promise<ReverifyReport> {
  const due = sql`coalesce(${domains.lastCheckedAt}, ${domains.createdAt})`;
  const rows = await db.select(domainColumns).from(domains)
    .where(lt(due, sql`now() - make_interval(hours => ${REVERIFY_INTERVAL_HOURS})`))
    .orderBy(asc(due), asc(domains.id))
    .limit(limit);
  const report: ReverifyReport = { checked: 0, verified: 0, pending: 0, failed: 0, errors: [] };
  let next = 0;
  const worker = async () => {
    while (next < rows.length) {
      const row = rows[next++]!;
      const outcome = await checkDomain(db, settings, row);
      if (!outcome.ok) {
        report.errors.push({ domain: row.name, problem: outcome.problem });
      } else if (outcome.row) {
        report.checked++;
        report[domainStatus(outcome.row).status]++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, rows.length) }, worker));
  return report;
}
