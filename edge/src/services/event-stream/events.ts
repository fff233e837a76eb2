// What the console's event stream carries (docs/console.md, "Event stream"):
// which outbox rows, audit events and webhook attempts become which SSE event,
// and the permission a member needs to see each. Metadata only, as webhooks:
// never a message body.
import { judge, roleRank, rolePermissions, type Permission, type Role } from '@edgemail/shared';
import type { StreamEventInput } from '../../env.js';

/** The SSE `event:` names of project events (`reset` and `end` are the stream's own). */
export const STREAM_EVENT_NAMES = ['inbound.received', 'email.status', 'webhook.delivery', 'audit'] as const;
export type StreamEventName = (typeof STREAM_EVENT_NAMES)[number];

/** What a member needs to see each kind: the read permission of the API route listing the same records. */
const NEEDS: Record<StreamEventName, Permission | 'role:admin'> = {
  'inbound.received': 'inbound:read',
  'email.status': 'emails:read',
  'webhook.delivery': 'webhooks:read',
  // As `GET /api/v1/audit-log`: a session needs the admin or owner role.
  audit: 'role:admin',
};

/** The kinds a member of the project may see, from their role and custom group. */
export function visibleEventNames(membership: { role: Role; groupPermissions: readonly string[] | null }): StreamEventName[] {
  const held = membership.groupPermissions ?? rolePermissions(membership.role);
  return STREAM_EVENT_NAMES.filter((name) => {
    const need = NEEDS[name];
    return need === 'role:admin' ? roleRank[membership.role] >= roleRank.admin : judge(held, need) === 'granted';
  });
}

const event = (source: string, name: StreamEventName, type: string, at: Date, data: unknown): StreamEventInput =>
  ({ source, name, payload: JSON.stringify({ type, at: at.toISOString(), data }) });

/**
 * An outbox row: `inbound.received` as itself, every `email.*` (sent, failed,
 * bounced, complained) as `email.status`; `type` is the webhook event type and
 * `data` the webhook envelope's `data`, so the two never disagree.
 */
export function outboxEvent(row: { id: number; event: string; data: unknown; createdAt: Date }): StreamEventInput | null {
  const name: StreamEventName | null = row.event === 'inbound.received' ? 'inbound.received' : row.event.startsWith('email.') ? 'email.status' : null;
  return name ? event(`outbox:${row.id}`, name, row.event, row.createdAt, row.data) : null;
}

/** A project audit event, as `GET /api/v1/audit-log` lists it. */
export function auditEvent(row: {
  id: string; type: string; projectId: string | null; actorId: string | null; actorEmail: string | null;
  clientIp: string | null; method: string | null; path: string | null; status: number | null; createdAt: Date;
}): StreamEventInput {
  return event(`audit:${row.id}`, 'audit', row.type, row.createdAt, {
    id: row.id, category: 'project', type: row.type, project_id: row.projectId, actor_id: row.actorId, actor_email: row.actorEmail,
    client_ip: row.clientIp, method: row.method, path: row.path, status: row.status, created_at: row.createdAt.toISOString(),
  });
}

/** One webhook delivery attempt's result: what `GET /api/v1/webhooks/{id}/deliveries` shows of it, no URL, no body. */
export interface DeliveryResult {
  deliveryId: string;
  webhookId: string;
  /** The webhook event type delivered. */
  event: string;
  attempt: number;
  /** After this attempt: `succeeded`, `failed` (no attempt left) or `pending` (retried after `webhook.retry_delay`). */
  status: 'succeeded' | 'failed' | 'pending';
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  startedAt: Date;
}

/** A recorded attempt's result; its status as `recordAttempts` moved the delivery on. */
export function deliveryResult({ delivery, outcome }: { delivery: { id: string; webhookId: string; event: string; attempt: number }; outcome: { ok: boolean; statusCode: number | null; error: string | null; durationMs: number; startedAt: Date } }, maxAttempts: number): DeliveryResult {
  const status = outcome.ok ? 'succeeded' : delivery.attempt >= maxAttempts ? 'failed' : 'pending';
  return {
    deliveryId: delivery.id, webhookId: delivery.webhookId, event: delivery.event, attempt: delivery.attempt, status,
    statusCode: outcome.statusCode, error: outcome.error, durationMs: outcome.durationMs, startedAt: outcome.startedAt,
  };
}

export function deliveryEvent(r: DeliveryResult): StreamEventInput {
  return event(`attempt:${r.deliveryId}:${r.attempt}`, 'webhook.delivery', 'webhook.delivery', r.startedAt, {
    delivery_id: r.deliveryId, webhook_id: r.webhookId, event: r.event, attempt: r.attempt, status: r.status,
    status_code: r.statusCode, error: r.error, duration_ms: r.durationMs,
  });
}
