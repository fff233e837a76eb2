// A relay node's lease on a submission key (docs/submission.md, "Answered at
// the node"): the key judged again, exactly as at AUTH, and what the node needs
// to answer the next messages itself for `submission.lease_ttl`: the project's
// verified sending domains and the recipients its plan still allows. One read,
// no lock and nothing reserved here: the node subtracts what it accepted and
// has not handed over yet, and the batch's send still checks the limit under
// the project's send lock (a message past it is recorded failed, never sent).
import { sql } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { SubmissionLeaseAnswer } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { isSendable } from '../domains/sendable.js';
import { planUsage, type PlanUsageRow } from '../emails/limits.js';
import type { RelayNodeRow } from '../relay-nodes/find.js';
import { checkSubmissionKey } from './check-key.js';

/** The lease, with the write recording the key's last use (null when none is due). */
export async function leaseSubmission(
  db: Db, node: RelayNodeRow, token: string, clientAddress: string, ttlMs: number,
): Promise<{ answer: SubmissionLeaseAnswer; touch: Promise<unknown> | null }> {
  const verdict = await checkSubmissionKey(db, node, token, clientAddress);
  if (!verdict.ok) return { answer: verdict, touch: null };
  const projectId = verdict.key.projectId;
  const [names, usage] = await Promise.all([
    db.select({ name: domains.name }).from(domains).where(sql`${domains.projectId} = ${projectId} and ${isSendable()}`),
    db.execute<PlanUsageRow>(planUsage(projectId)),
  ]);
  return {
    answer: {
      ok: true, project_id: projectId, sandbox: verdict.key.sandbox, ttl_ms: ttlMs,
      domains: names.map((d) => d.name.toLowerCase()),
      remaining: remainingOf(usage.rows[0]),
    },
    touch: verdict.touch,
  };
}

/** The tighter of the plan's two windows; null when neither is limited (or there is no plan). */
function remainingOf(row: PlanUsageRow | undefined): number | null {
  if (!row) return 0;
  const left = [
    row.hourly_limit > 0 ? row.hourly_limit - row.hour_used : null,
    row.daily_limit > 0 ? row.daily_limit - row.day_used : null,
  ].filter((n): n is number => n !== null);
  return left.length ? Math.max(0, Math.min(...left)) : null;
}
