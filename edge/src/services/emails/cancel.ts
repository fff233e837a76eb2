// Canceling one recipient of a send before a relay node claims it
// (docs/sending.md, "Scheduling and canceling"): a `queued` row becomes
// `canceled` and is never handed out; any other status is a 409 naming it.
import { and, eq, sql } from 'drizzle-orm';
import { emails, outboundMessages } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { EmailRecord, EmailStatus } from '../../contracts/email.js';
import { conflict } from '../errors.js';
import { emailNotFound } from './get.js';
import { emailColumns, presentEmail } from './present.js';

/**
 * Cancels the project's recipient row `id` when it is `queued` (scheduled,
 * or waiting for its next try after a deferral: no node holds it) and answers
 * its log record; 404 for another project's or an unknown id, 409 naming the
 * status otherwise.
 *
 * One statement decides, atomic against a concurrent claim: the row is
 * locked first (`for update`), so a claim that took it meanwhile (the claim
 * skips locked rows and locks what it takes) is either waited for and then
 * seen as `sending`, or finds the row locked and leaves it; the update
 * happens only on the status read under that lock.
 */
export async function cancelEmail(db: Db, projectId: string, id: string): Promise<EmailRecord> {
  const { rows: [verdict] } = await db.execute<{ status: EmailStatus; canceled: boolean }>(sql`
    with target as (
      select e.id, e.status from ${emails} e where e.id = ${id} and e.project_id = ${projectId} for update
    ), canceled as (
      update ${emails} e set status = 'canceled', next_attempt_at = null
      from target t where e.id = t.id and t.status = 'queued'
      returning e.id
    )
    select t.status, exists (select 1 from canceled) as canceled from target t`);
  if (!verdict) throw emailNotFound();
  if (!verdict.canceled) {
    throw conflict(`email cannot be canceled: it is ${verdict.status} (only a queued email can be, before a relay node claims it)`);
  }
  const [row] = await db.select(emailColumns).from(emails)
    .innerJoin(outboundMessages, eq(outboundMessages.id, emails.messageId))
    .where(and(eq(emails.projectId, projectId), eq(emails.id, id)));
  if (!row) throw emailNotFound(); // deleted with its project in between
  return presentEmail(row);
}
