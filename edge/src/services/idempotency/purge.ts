import { sql } from 'drizzle-orm';
import { idempotencyKeys } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { IDEMPOTENCY_TTL } from './keys.js';

/**
 * Removes every `Idempotency-Key` record older than 24 hours, in all
 * projects (the send routes already ignore them). For the cron.
 * @returns how many were removed
 * @example const removed = await purgeIdempotencyKeys(db);
 */
export async function purgeIdempotencyKeys(db: Db): Promise<number> {
  const result = await db.execute(sql`delete from ${idempotencyKeys} where created_at <= now() - ${IDEMPOTENCY_TTL}`);
  return result.rowCount ?? 0;
}
