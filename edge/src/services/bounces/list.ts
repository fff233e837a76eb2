import { and, eq, sql } from 'drizzle-orm';
import { bounces } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { BounceCursor, BounceTypeName } from '../../contracts/bounce.js';
import { bounceColumns, presentBounce } from './present.js';

export interface BounceListQuery {
  limit: number;
  type?: BounceTypeName;
  recipient?: string;
  emailId?: string;
  /** `created_at` and id of the last row seen: the page starts strictly after it. */
  cursor?: BounceCursor;
}

/**
 * A page of the project's bounces and complaints, newest first by
 * `(created_at, id)` (the row comparison keeps rows sharing one `created_at`
 * from being skipped or repeated across pages), read along
 * `bounces_project_id_created_at_idx`; filters narrow it. One row beyond
 * the page says whether there is a next one.
 */
export async function listBounces(db: Db, projectId: string, query: BounceListQuery) {
  const { limit, type, recipient, emailId, cursor } = query;
  const rows = await db.select(bounceColumns).from(bounces)
    .where(and(
      eq(bounces.projectId, projectId),
      type ? eq(bounces.type, type) : undefined,
      recipient ? sql`lower(${bounces.recipient}) = lower(${recipient})` : undefined,
      emailId ? eq(bounces.emailId, emailId) : undefined,
      cursor ? sql`(${bounces.createdAt}, ${bounces.id}) < (${cursor.before}::timestamptz, ${cursor.before_id}::uuid)` : undefined,
    ))
    // NULLS LAST as the index is built, so the planner reads it in order.
    .orderBy(sql`${bounces.createdAt} desc nulls last`, sql`${bounces.id} desc nulls last`)
    .limit(limit + 1);
  const page = rows.slice(0, limit).map(presentBounce);
  const last = page.at(-1);
  return { bounces: page, next: rows.length > limit && last ? { before: last.created_at, before_id: last.id } : null };
}
