// The one way delivery suppresses an address after a hard bounce or a
// complaint (docs/suppressions.md): a node's refused attempt
// (`results.ts`) and a bounce report of any source (`bounces/record.ts`)
// write the same row with the same conflict rule, so that the two can never
// drift apart.
import { sql, type SQL } from 'drizzle-orm';
import { suppressions } from '@edgemail/schema';

/**
 * The `insert … on conflict` that suppresses the addresses `rows` selects, as
 * one CTE's body: `rows` is a `select` answering `project_id, address, reason,
 * detail, source_email_id` (the address lower-cased, one row per project and
 * address). The entry is for every stream of the project; an existing entry is
 * kept unless it has expired, in which case it is written over and no longer
 * expires.
 *
 * @example sql`with suppressed as (${suppressAddresses(sql`select project_id, lower(recipient), 'hard_bounce'::suppression_reason, reply, email_id from decided`)}) …`
 */
export function suppressAddresses(rows: SQL): SQL {
  return sql`insert into ${suppressions} (project_id, address, reason, detail, source_email_id)
      ${rows}
      on conflict (project_id, address, stream) do update
        set reason = excluded.reason, detail = excluded.detail, source_email_id = excluded.source_email_id,
            expires_at = null, created_at = now()
        where ${suppressions}.expires_at is not null and ${suppressions}.expires_at <= now()`;
}
