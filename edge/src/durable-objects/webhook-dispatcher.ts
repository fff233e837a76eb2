// Webhook delivery for one project (`idFromName(projectId)`). PostgreSQL holds
// the queue (services/webhooks/queue.ts); this object makes the attempts and
// keeps one alarm set for the project's next due delivery. Alarms are stored
// by the runtime, so a retry scheduled before a restart still happens after it.
//
// Under load, hand-overs that arrive while a fan-out is running are fanned
// out together, and attempts that finish while a record is being written are
// recorded together: a few round trips per batch instead of two per event.
import { DurableObject } from 'cloudflare:workers';
import { envelopeBody } from '@edgemail/shared';
import { connect } from '../db/client.js';
import { loggableError } from '../db/errors.js';
import { settingsOf } from '../settings.js';
import { attemptDelivery, type AttemptOutcome } from '../services/webhooks/attempt.js';
import { claimDue, fanOut, nextDueAt, recordAttempts, type AttemptRecord, type ClaimedDelivery, type FailingWebhook } from '../services/webhooks/queue.js';
import { disableReason, disableWebhook } from '../services/webhooks/disable.js';
import { openWebhookSecret } from '../services/webhooks/secret.js';
import { publishDeliveryResults, publishOutbox } from '../services/event-stream/publish.js';
import { deliveryResult } from '../services/event-stream/events.js';
import { Coalescer } from './coalescer.js';
import type { Bindings, WebhookDispatcherRpc } from '../env.js';

/** Deliveries claimed per pass of the due loop. */
const CLAIM_BATCH = 100;
/**
 * How long a claimed attempt stays leased before another pass may make it
 * again: twice the request timeout (the target check and the request are
 * each bounded by it) and a margin for recording it.
 */
const leaseFor = (timeoutMs: number) => 2 * timeoutMs + 5_000;
const PROJECT_KEY = 'project_id';

/** An outbox row waiting for the next fan-out, and where its deliveries go. */
interface HandOver { outboxId: number; deliveries: ClaimedDelivery[] }

export class WebhookDispatcher extends DurableObject<Bindings> implements WebhookDispatcherRpc {
  private projectId: string | undefined;

  private readonly fanOuts = new Coalescer<HandOver>(async (handOvers) => {
    const { db, leaseMs } = this.settings;
    const { claimed, queued } = await fanOut(db, this.projectId!, handOvers.map((h) => h.outboxId), leaseMs);
    const byOutbox = new Map(handOvers.map((h) => [h.outboxId, h]));
    for (const d of claimed) byOutbox.get(d.outboxId!)?.deliveries.push(d);
    // Deliveries to ordered webhooks wait in the queue: the due loop sends each once its key's earlier events are done.
    if (queued) this.later(this.drainDue());
  });

  private readonly records = new Coalescer<AttemptRecord>(async (records) => {
    const { db, config } = this.settings;
    const maxAttempts = config['webhook.max_attempts'];
    const { next, updateSpans } = await recordAttempts(db, this.projectId!, records, {
      maxAttempts, retryDelayMs: config['webhook.retry_delay'],
      disableAfterMs: config['webhook.disable_after'], disableAfterFailures: config['webhook.disable_after_failures'],
    });
    // Recorded: now the console's stream may show them (it never delays the next attempt's schedule).
    await Promise.all([this.schedule(next), publishDeliveryResults(this.env, this.projectId!, records.map((r) => deliveryResult(r, maxAttempts)))]);
    // Not awaited beyond the spans: the disable's own event is fanned out and attempted, and its record would wait for this one.
    for (const w of await updateSpans()) this.later(this.disable(w));
  });

  private get settings() {
    const { config } = settingsOf(this.env);
    return { db: connect(config['database.url'], this.env.LOCAL_NEON_BRIDGE), config, leaseMs: leaseFor(config['webhook.timeout']) };
  }

  /** Turns committed outbox rows into deliveries and makes their first attempts; resolves once they are recorded. */
  async dispatch(projectId: string, outboxIds: number[]): Promise<void> {
    await this.remember(projectId);
    const handOvers = outboxIds.map((outboxId) => ({ outboxId, deliveries: [] as ClaimedDelivery[] }));
    await this.fanOuts.add(handOvers);
    await this.attemptAll(handOvers.flatMap((h) => h.deliveries));
  }

  /** Attempts every delivery of the project that is due now. */
  async wake(projectId: string): Promise<void> {
    await this.remember(projectId);
    await this.drainDue();
  }

  override async alarm(): Promise<void> {
    this.projectId ??= await this.ctx.storage.get<string>(PROJECT_KEY);
    if (this.projectId) await this.drainDue();
  }

  private async remember(projectId: string) {
    if (this.projectId === projectId) return;
    // The alarm has no caller to name the project; this object serves one project only.
    this.projectId = projectId;
    if (await this.ctx.storage.get<string>(PROJECT_KEY) !== projectId) await this.ctx.storage.put(PROJECT_KEY, projectId);
  }

  private async drainDue() {
    const { db, config, leaseMs } = this.settings;
    for (;;) {
      const due = await claimDue(db, this.projectId!, { maxAttempts: config['webhook.max_attempts'], leaseMs, limit: CLAIM_BATCH });
      await this.attemptAll(due);
      if (due.length < CLAIM_BATCH) break;
    }
    // Keep the alarm on the next pending delivery, whatever this pass found.
    await this.schedule(await nextDueAt(db, this.projectId!));
  }

  /** Attempts claimed deliveries; whatever becomes of this object meanwhile, the alarm comes back when their leases end. */
  private async attemptAll(deliveries: ClaimedDelivery[]) {
    if (!deliveries.length) return;
    await this.schedule(new Date(Date.now() + this.settings.leaseMs));
    await Promise.all(deliveries.map((d) => this.attempt(d)));
  }

  /** One attempt of one delivery, recorded (with whatever else finished meanwhile). */
  private async attempt(delivery: ClaimedDelivery) {
    const { config } = this.settings;
    // Read at every attempt, so a rotated secret applies from the next attempt on.
    const secret = await openWebhookSecret(delivery.secretSealed, config['database.crypto.encryption_key']).catch(() => null);
    const outcome: AttemptOutcome = secret === null
      ? { ok: false, startedAt: new Date(), durationMs: 0, statusCode: null, error: 'signing secret cannot be opened with database.crypto.encryption_key', responseExcerpt: '' }
      : await attemptDelivery(
        { url: delivery.url, secret, deliveryId: delivery.id, event: delivery.event },
        envelopeBody(delivery.event, delivery.eventAt, delivery.data),
        { timeoutMs: config['webhook.timeout'], dohUrl: config['dns.doh_url'], allowPrivateTargets: config['webhook.allow_private_targets'] },
      );
    await this.records.add([{ delivery, outcome }]);
  }

  /** Disables a webhook whose span of failures reached `webhook.disable_after`; its `webhook.disabled` goes to the others now. */
  private async disable(w: FailingWebhook) {
    const { db, config } = this.settings;
    const outboxIds = await disableWebhook(db, config, w);
    if (!outboxIds.length) return;
    console.warn(`webhook ${w.id} of project ${w.project_id} disabled: ${disableReason(w)}`);
    await Promise.all([this.dispatch(w.project_id, outboxIds), publishOutbox(this.env, w.project_id, outboxIds)]);
  }

  /** Work started from inside a batch that must not wait for it; a failure is logged (the sweep and alarm make good). */
  private later(work: Promise<unknown>) {
    work.catch((e) => console.error(`webhook dispatcher of project ${this.projectId}:`, loggableError(e)));
  }

  private async schedule(at: Date | null) {
    if (!at) return;
    const current = await this.ctx.storage.getAlarm();
    // An earlier alarm stays: it runs the due loop, which sets the next one.
    if (current === null || current > at.getTime()) await this.ctx.storage.setAlarm(at.getTime());
  }
}
