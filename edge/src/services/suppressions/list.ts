import { and, asc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import { suppressions } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { SuppressionReason } from '../../contracts/suppression.js';
import { presentSuppression, suppressionColumns } from './present.js';

function afterCursor(after: string) {
  const space = after.indexOf(' ');
  const [address, stream] = space < 0 ? [after, ''] : [after.slice(0, space), after.slice(space + 1)];
  return sql`(${suppressions.address}, ${suppressions.stream}) > (${address}, ${stream})`;
}

/** An entry that still applies: no `expires_at`, or one still ahead (the database's clock, as the send check reads it). */
export const unexpired = () => or(isNull(suppressions.expiresAt), gt(suppressions.expiresAt, sql`now()`));

/**
 * A page of the project's suppressions in address order, after `after`
 * (exclusive). An address has one entry for every stream (stream '') and one
 * per stream, so the cursor is the address, then a space and the stream for
 * a stream's entry (an address has no space): `(address, stream)` is unique
 * per project, read off its unique index. A cursor of an address alone (as
 * before streams) starts at that address's stream entries. Entries past
 * `expires_at` are left out unless `include_expired`.
 */
export async function listSuppressions(
  db: Db, projectId: string,
  opts: { limit: number; after?: string; reason?: SuppressionReason; include_expired?: boolean },
) {
  const rows = await db.select(suppressionColumns).from(suppressions)
    .where(and(
      eq(suppressions.projectId, projectId),
      opts.after === undefined ? undefined : afterCursor(opts.after),
      opts.reason === undefined ? undefined : eq(suppressions.reason, opts.reason),
      opts.include_expired ? undefined : unexpired(),
    ))
    .orderBy(asc(suppressions.address), asc(suppressions.stream))
    .limit(opts.limit + 1);
  const page = rows.slice(0, opts.limit);
  const more = rows.length > opts.limit;
  const last = page.at(-1);
  return { suppressions: page.map(presentSuppression), next: more && last ? { after: last.stream ? `${last.address} ${last.stream}` : last.address } : null };
}
