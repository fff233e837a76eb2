import { auditEvents } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { AuditEventRow } from './queue.js';

/** One multi-row insert per batch. */
export const writeAuditEvents = (db: Db) => (batch: AuditEventRow[]) => db.insert(auditEvents).values(batch);
