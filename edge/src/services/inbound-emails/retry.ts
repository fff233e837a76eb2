import { outbox } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { inboundReceivedData } from './event-data.js';
import { getInboundEmail } from './get.js';

/**
 * Re-emits `inbound.received` for a stored message, whatever its status: one
 * new outbox row built from the record as stored (nothing is parsed again).
 * `emitted` means the row was written, not that a receiver answered.
 */
export async function retryInboundEmail(db: Db, projectId: string, id: string): Promise<{ emitted: true; outboxId: number }> {
  const record = await getInboundEmail(db, projectId, id);
  const [row] = await db.insert(outbox).values({ projectId, event: 'inbound.received', data: inboundReceivedData(record) }).returning({ id: outbox.id });
  return { emitted: true, outboxId: row!.id };
}
