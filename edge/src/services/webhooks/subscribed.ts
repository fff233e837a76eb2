// Whether an event about to be written to the outbox has a webhook to go to.
// A row nobody takes is born handed over (no dispatcher call for it; the
// console's event stream still gets it). A disabled webhook takes nothing
// (docs/webhooks.md "Automatic disable": nothing is enqueued while it is
// disabled), so it counts as no subscriber here, as in the fan-out.
import { sql, type SQL } from 'drizzle-orm';
import { webhooks } from '@edgemail/schema';

/**
 * `handed_over_at` for a new outbox row of project `projectId` and event type
 * `event` (SQL expressions): null when an enabled webhook of the project
 * subscribes to the type (or to `*`), else now(). Sender filters are the
 * fan-out's to apply (takesEvent in queue.ts): a row they all decline is
 * handed over there, with no delivery.
 */
export function handedOverUnlessSubscribed(projectId: SQL, event: SQL): SQL {
  return sql`case when exists (select 1 from ${webhooks} w where w.project_id = ${projectId} and w.disabled_at is null
                          and (${event} = any(w.events) or '*' = any(w.events)))
             then null else now() end`;
}
