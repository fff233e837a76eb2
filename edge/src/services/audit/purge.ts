import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';

const CHUNK = 5_000;

/**
 * Deletes audit events older than `days` (0 keeps everything), in chunks so
 * one run never holds a long lock. Returns how many were deleted.
 */
export async function purgeAuditEvents(db: Db, days: number): Promise<number> {
  if (days <= 0) return 0;
  let total = 0;
  for (;;) {
    const result = await db.execute(sql`
      DELETE FROM audit_events WHERE id IN (
        SELECT id FROM audit_events WHERE created_at < now() - make_interval(days => ${days}) LIMIT ${CHUNK})`);
    const deleted = result.rowCount ?? 0;
    total += deleted;
    if (deleted < CHUNK) return total;
  }
}
