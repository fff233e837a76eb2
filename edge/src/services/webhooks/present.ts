import { sql } from 'drizzle-orm';
import { webhookAttempts, webhookDeliveries, webhooks } from '@edgemail/schema';
import { iso } from '../../contracts/common.js';
import type { WebhookAttemptRecord, WebhookDeliveryRecord, WebhookRecord } from '../../contracts/webhook.js';
import { cursorTimestamp } from '../inbound-emails/present.js';

/** Everything of a webhook but its sealed secret, which no record carries. */
export const webhookColumns = {
  id: webhooks.id, projectId: webhooks.projectId, url: webhooks.url, events: webhooks.events,
  filters: webhooks.filters, createdAt: webhooks.createdAt, secretRotatedAt: webhooks.secretRotatedAt,
  ordered: webhooks.ordered, disabledAt: webhooks.disabledAt, disabledReason: webhooks.disabledReason,
  failingSince: webhooks.failingSince, consecutiveFailures: webhooks.consecutiveFailures,
};
type WebhookRow = Pick<typeof webhooks.$inferSelect, keyof typeof webhookColumns>;

export function presentWebhook(row: WebhookRow): WebhookRecord {
  return {
    id: row.id, project_id: row.projectId, url: row.url, events: row.events, filters: row.filters,
    created_at: row.createdAt.toISOString(), secret_rotated_at: iso(row.secretRotatedAt),
    ordered: row.ordered, status: row.disabledAt ? 'disabled' : 'enabled', disabled_at: iso(row.disabledAt),
    disabled_reason: row.disabledReason, failing_since: iso(row.failingSince), consecutive_failures: row.consecutiveFailures,
  };
}

/**
 * The columns a delivery is built from. `createdMicros` is the part of
 * `created_at` below the millisecond, which a JavaScript Date drops: the
 * record carries it so that `created_at` sent back as `before` is exact.
 */
export const deliveryColumns = {
  id: webhookDeliveries.id, webhookId: webhookDeliveries.webhookId, event: webhookDeliveries.event,
  eventAt: webhookDeliveries.eventAt, data: webhookDeliveries.data, status: webhookDeliveries.status,
  attempts: webhookDeliveries.attempts, nextAttemptAt: webhookDeliveries.nextAttemptAt,
  lastStatusCode: webhookDeliveries.lastStatusCode, lastError: webhookDeliveries.lastError,
  redeliveryOf: webhookDeliveries.redeliveryOf, replayId: webhookDeliveries.replayId, createdAt: webhookDeliveries.createdAt,
  completedAt: webhookDeliveries.completedAt,
  createdMicros: sql<number>`(extract(microseconds from ${webhookDeliveries.createdAt})::int % 1000)`.mapWith(Number),
};
export type DeliveryRow = Pick<typeof webhookDeliveries.$inferSelect, Exclude<keyof typeof deliveryColumns, 'createdMicros'>> & { createdMicros: number };

export const attemptColumns = {
  deliveryId: webhookAttempts.deliveryId, attempt: webhookAttempts.attempt, startedAt: webhookAttempts.startedAt,
  durationMs: webhookAttempts.durationMs, statusCode: webhookAttempts.statusCode, error: webhookAttempts.error,
  responseExcerpt: webhookAttempts.responseExcerpt,
};
export type AttemptRow = Pick<typeof webhookAttempts.$inferSelect, keyof typeof attemptColumns>;

export function presentAttempt(row: AttemptRow): WebhookAttemptRecord {
  return {
    attempt: row.attempt, started_at: row.startedAt.toISOString(), duration_ms: row.durationMs,
    status_code: row.statusCode, error: row.error, response_excerpt: row.responseExcerpt,
  };
}

/** @param attempts the delivery's attempt rows, in attempt order */
export function presentDelivery(row: DeliveryRow, attempts: AttemptRow[]): WebhookDeliveryRecord {
  return {
    id: row.id, webhook_id: row.webhookId, event: row.event, event_at: row.eventAt.toISOString(), data: row.data,
    status: row.status, attempts: row.attempts,
    // Outside `pending` the column may still hold a lease end: it means nothing to a reader.
    next_attempt_at: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
    last_status_code: row.lastStatusCode, last_error: row.lastError, redelivery_of: row.redeliveryOf, replay_id: row.replayId,
    created_at: cursorTimestamp(row.createdAt, row.createdMicros), completed_at: iso(row.completedAt),
    attempt_log: attempts.map(presentAttempt),
  };
}
