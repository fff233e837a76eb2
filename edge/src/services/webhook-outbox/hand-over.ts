// Handing events to the project's WebhookDispatcher and, side by side, to its
// console EventStream. Called after the response (`waitUntil`), so neither
// delays the request that wrote the event; a hand-over that never happens is
// made good by the cron sweep, which calls this too.
import type { Bindings } from '../../env.js';
import { loggableError } from '../../db/errors.js';
import { publishOutbox } from '../event-stream/publish.js';
import type { OutboxRows } from '../emails/events.js';

const dispatcherOf = (env: Bindings, projectId: string) =>
  env.WEBHOOK_DISPATCHER.get(env.WEBHOOK_DISPATCHER.idFromName(projectId));

/**
 * Hands committed outbox rows of one project to its dispatcher, which delivers
 * them, and to its event stream (which drops a row it already has).
 */
export async function handOverOutbox(env: Bindings, projectId: string, rows: number[] | OutboxRows): Promise<void> {
  const { ids, settled } = Array.isArray(rows) ? { ids: rows, settled: [] } : rows;
  await Promise.all([
    ids.length ? dispatch(env, projectId, ids) : undefined,
    publishOutbox(env, projectId, [...ids, ...settled].sort((a, b) => a - b)),
  ]);
}

async function dispatch(env: Bindings, projectId: string, outboxIds: number[]): Promise<void> {
  try {
    await dispatcherOf(env, projectId).dispatch(projectId, outboxIds);
  } catch (e) {
    // The sweep hands the rows over later; nothing is lost.
    // loggableError: the SQLSTATE and server message, never the parameters (addresses, event data).
    console.error(`webhook hand-over of outbox ${outboxIds.join(',')} failed, left to the sweep:`, loggableError(e));
  }
}

/** Asks the project's dispatcher to attempt every delivery that is due (a redelivery, an overdue retry). */
export async function wakeDispatcher(env: Bindings, projectId: string): Promise<void> {
  try {
    await dispatcherOf(env, projectId).wake(projectId);
  } catch (e) {
    console.error(`webhook dispatcher of project ${projectId} could not be woken, left to the sweep: ${e instanceof Error ? e.message : String(e)}`);
  }
}
