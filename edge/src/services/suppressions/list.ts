import { and, asc, eq, gt } from 'drizzle-orm';
import { suppressions } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { presentSuppression, suppressionColumns } from './present.js';

/**
 * A page of the project's suppressions in address order, after `after`
 * (exclusive). Addresses are unique per project, so the address alone is the
 * cursor, read off the `(project_id, address)` unique index.
 */
export async function listSuppressions(db: Db, projectId: string, opts: { limit: number; after?: string }) {
  const rows = await db.select(suppressionColumns).from(suppressions)
    .where(and(eq(suppressions.projectId, projectId), opts.after === undefined ? undefined : gt(suppressions.address, opts.after)))
    .orderBy(asc(suppressions.address))
    .limit(opts.limit + 1);
  const page = rows.slice(0, opts.limit);
  const more = rows.length > opts.limit;
  return { suppressions: page.map(presentSuppression), next: more ? { after: page.at(-1)!.address } : null };
}
