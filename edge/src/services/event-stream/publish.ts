// Handing committed events to the project's EventStream Durable Object, which
// numbers them, keeps them for resuming and pushes them to open streams.
// Called after the response (`waitUntil`) or by a Durable Object, never
// before the event is committed. A transient failure of the object is tried
// again (the object drops an event it has, by its source); a lasting one is
// logged and never thrown, so the stream can never fail what it reports.
import { retryTransient } from '../../net/retry-transient.js';
import type { Bindings, StreamEventInput } from '../../env.js';
import { auditEvent, deliveryEvent, type DeliveryResult } from './events.js';

export const eventStreamOf = (env: Bindings, projectId: string) =>
  env.EVENT_STREAM.get(env.EVENT_STREAM.idFromName(projectId));

const failed = (what: string, e: unknown) =>
  console.error(`event stream: ${what} not published: ${e instanceof Error ? e.message : String(e)}`);

/** Committed outbox rows of one project (the webhook hand-over and the cron sweep both call this). */
export async function publishOutbox(env: Bindings, projectId: string, outboxIds: number[]): Promise<void> {
  if (!outboxIds.length) return;
  try {
    await retryTransient(() => eventStreamOf(env, projectId).publishOutbox(projectId, outboxIds));
  } catch (e) {
    failed(`outbox ${outboxIds.join(',')} of project ${projectId}`, e);
  }
}

export async function publishEvents(env: Bindings, projectId: string, events: StreamEventInput[]): Promise<void> {
  if (!events.length) return;
  try {
    await retryTransient(() => eventStreamOf(env, projectId).publish(projectId, events));
  } catch (e) {
    failed(`${events.length} events of project ${projectId}`, e);
  }
}

type AuditRow = Parameters<typeof auditEvent>[0] & { category: string };

/** Audit events just written: the project ones, to their projects' streams (account security events have no project). */
export async function publishAuditEvents(env: Bindings, rows: AuditRow[]): Promise<void> {
  const byProject = new Map<string, StreamEventInput[]>();
  for (const row of rows) {
    if (row.category !== 'project' || !row.projectId) continue;
    byProject.set(row.projectId, [...(byProject.get(row.projectId) ?? []), auditEvent(row)]);
  }
  await Promise.all([...byProject].map(([projectId, events]) => publishEvents(env, projectId, events)));
}

/** Webhook attempts just recorded by the project's dispatcher. */
export function publishDeliveryResults(env: Bindings, projectId: string, results: DeliveryResult[]): Promise<void> {
  return publishEvents(env, projectId, results.map(deliveryEvent));
}
