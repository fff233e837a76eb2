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
