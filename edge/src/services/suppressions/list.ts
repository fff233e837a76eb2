import { and, asc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import { suppressions } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { SuppressionReason } from '../../contracts/suppression.js';
import { presentSuppression, suppressionColumns } from './present.js';

/** An entry that still applies: no `expires_at`, or one still ahead (the database's clock, as the send check reads it). */
export const unexpired = () => or(isNull(suppressions.expiresAt), gt(suppressions.expiresAt, sql`now()`));

/**
 * A page of the project's suppressions in address order, after `after`
 * (exclusive). Addresses are unique per project, so the address alone is the
 * cursor, read off the `(project_id, address)` unique index. Entries past
 * `expires_at` are left out unless `include_expired`.
 */
export async function listSuppressions(
  db: Db, projectId: string,
  opts: { limit: number; after?: string; reason?: SuppressionReason; include_expired?: boolean },
) {
  const rows = await db.select(suppressionColumns).from(suppressions)
    .where(and(
      eq(suppressions.projectId, projectId),
      opts.after === undefined ? undefined : gt(suppressions.address, opts.after),
      opts.reason === undefined ? undefined : eq(suppressions.reason, opts.reason),
      opts.include_expired ? undefined : unexpired(),
    ))
    .orderBy(asc(suppressions.address))
    .limit(opts.limit + 1);
  const page = rows.slice(0, opts.limit);
  const more = rows.length > opts.limit;
  return { suppressions: page.map(presentSuppression), next: more ? { after: page.at(-1)!.address } : null };
}
