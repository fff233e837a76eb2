// The one condition the webhook fan-out adds for routing rules: an
// `inbound.received` event a `webhooks` rule stored with `outbox.webhook_ids`
// goes only to those webhooks (docs/inbound-rules.md); any other event
// (webhook_ids null) to every subscribed one.
import { sql } from 'drizzle-orm';
import { outbox } from '@edgemail/schema';

/** SQL: webhook `w` (an alias) may take outbox row `c` (an alias with `id`). */
export const chosenByInboundRule = (w: string, c: string) =>
  sql`not exists (select 1 from ${outbox} o where o.id = ${sql.raw(c)}.id and o.webhook_ids is not null and ${sql.raw(w)}.id <> all(o.webhook_ids))`;
