// Handing events to the project's WebhookDispatcher. Called after the response
// (`waitUntil`), so a slow dispatcher never delays the request that wrote the
// event; a hand-over that never happens is made good by the cron sweep.
import type { Bindings } from '../../env.js';

const dispatcherOf = (env: Bindings, projectId: string) =>
  env.WEBHOOK_DISPATCHER.get(env.WEBHOOK_DISPATCHER.idFromName(projectId));

/** Hands committed outbox rows of one project to its dispatcher, which delivers them. */
export async function handOverOutbox(env: Bindings, projectId: string, outboxIds: number[]): Promise<void> {
  if (!outboxIds.length) return;
  try {
    await dispatcherOf(env, projectId).dispatch(projectId, outboxIds);
  } catch (e) {
    // The sweep hands the rows over later; nothing is lost.
    console.error(`webhook hand-over of outbox ${outboxIds.join(',')} failed, left to the sweep: ${e instanceof Error ? e.message : String(e)}`);
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
