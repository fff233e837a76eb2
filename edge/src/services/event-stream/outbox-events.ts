// The stream's read of committed outbox rows: the metadata the webhook
// envelope carries, by id, within the one project the stream serves.
import { sql } from 'drizzle-orm';
import { outbox } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { StreamEventInput } from '../../env.js';
import { outboxEvent } from './events.js';

type Row = { id: string | number; event: string; data: unknown; created_at: string | Date };

/** The stream events of these outbox rows, in id order; rows of another project or already purged yield nothing. */
export async function outboxStreamEvents(db: Db, projectId: string, outboxIds: number[]): Promise<StreamEventInput[]> {
  const { rows } = await db.execute<Row>(sql`
    select id, event, data, created_at from ${outbox}
    where id = any(${`{${outboxIds.join(',')}}`}::bigint[]) and project_id = ${projectId}
    order by id`);
  return rows.flatMap((r) => outboxEvent({ id: Number(r.id), event: r.event, data: r.data, createdAt: new Date(r.created_at) }) ?? []);
}

/**
 * Records that the stream has these rows (`outbox.streamed_at`), set by the
 * stream itself once it holds them, so it is never set before; the cron sweep
 * hands over again every row still without it (services/webhook-outbox/sweep.ts).
 */
export async function markStreamed(db: Db, projectId: string, outboxIds: number[]): Promise<void> {
  if (!outboxIds.length) return;
  await db.execute(sql`
    update ${outbox} set streamed_at = now()
    where id = any(${`{${outboxIds.join(',')}}`}::bigint[]) and project_id = ${projectId} and streamed_at is null`);
}
