import { auditEvents } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { AuditEventRow } from './queue.js';

export type WrittenAuditEvent = typeof auditEvents.$inferSelect;

/**
 * One multi-row insert per batch. `onWritten` gets the stored rows (the audit
 * middleware hands the project ones to the console's event stream: only once
 * stored, and without holding up the next batch).
 */
export const writeAuditEvents = (db: Db, onWritten?: (rows: WrittenAuditEvent[]) => void) => async (batch: AuditEventRow[]) => {
  if (!onWritten) return db.insert(auditEvents).values(batch);
  onWritten(await db.insert(auditEvents).values(batch).returning());
};
