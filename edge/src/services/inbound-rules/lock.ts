import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';

/**
 * The first statement of every change to a project's rules: one writer at a
 * time per project, so positions stay 1..n and the count under its cap.
 */
export const lockProjectRules = (db: Db, projectId: string) =>
  db.execute(sql`select pg_advisory_xact_lock(hashtext('inbound_rules'), hashtext(${projectId}))`);
