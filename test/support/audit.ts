// Reading the audit log without sleeping: audit events are written after the
// response, so a test that asserts an event is absent must first know that
// everything queued before has been written.
import { expect } from 'vitest';
import type { TestStack } from './stack.js';
import { eventually } from './wait.js';

// Markers come from the benchmarking range (RFC 2544); no other test request does.
const MARKER_PREFIX = '198.18.';
let markers = 0;

/**
 * Every stored audit event but the markers, oldest first, once the event of
 * every request made so far is stored or never will be. It makes a write that
 * is recorded (a plan, by the platform credential `admin`, from an address of
 * its own) and waits for that event: the isolate's queue stores events in the
 * order they were queued (`AuditQueue.flush`), so an earlier request's event
 * still absent then was never recorded.
 */
export async function settledAuditEvents(stack: TestStack, admin: string): Promise<any[]> {
  const ip = `${MARKER_PREFIX}${Math.floor(markers / 250)}.${(markers % 250) + 1}`;
  markers++;
  const r = await stack.call('POST', '/api/v1/admin/plans', { token: admin, headers: { 'cf-connecting-ip': ip }, body: { name: `marker ${ip}` } });
  expect(r.status).toBe(201);
  await eventually(async () => (await stack.sql.query('SELECT 1 FROM audit_events WHERE client_ip = $1', [ip])).rowCount, (n) => n === 1);
  const { rows } = await stack.sql.query(
    `SELECT * FROM audit_events WHERE client_ip IS NULL OR client_ip NOT LIKE '${MARKER_PREFIX}%' ORDER BY created_at, id`,
  );
  return rows;
}

/** The events of `after` that are not in `before`, in `after`'s order. */
export function addedEvents(before: any[], after: any[]): any[] {
  const seen = new Set(before.map((e) => e.id));
  return after.filter((e) => !seen.has(e.id));
}
