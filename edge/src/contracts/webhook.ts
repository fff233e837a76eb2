import { z } from '@hono/zod-openapi';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES } from '@edgemail/shared';
import { IdParams, integerQuery, Timestamp, Uuid } from './common.js';
import { CursorTimestamp, keysetCursor, keysetQuery, queryParam } from './keyset.js';
import { normalizeDomainName } from './domain-name.js';
import { normalizeAddress } from './email-address.js';

// The spec's limit: one constant for the schema and the target checks.
import { WEBHOOK_URL_MAX_LENGTH as WEBHOOK_URL_MAX } from '../net/public-target.js';
export const WEBHOOK_EVENTS_MAX = 10;
export const WEBHOOK_FILTERS_MAX = 20;
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export const DELIVERIES_LIMIT_DEFAULT = 50;
export const DELIVERIES_LIMIT_MAX = 200;

/** `required` for a missing field, else `problem` (zod's own text names JavaScript types). */
const requiredOr = (problem: string) => ({ error: (issue: { input?: unknown }) => (issue.input === undefined ? 'required' : problem) });

const isHttpUrl = (text: string) => {
  try {
    const { protocol } = new URL(text);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
};

/** A sender filter as stored: the bare lower-case address, or `*@<domain>`. */
export function normalizeSenderFilter(input: string): { filter: string } | { problem: string } {
  const text = input.trim();
  if (text.startsWith('*@')) {
    const domain = normalizeDomainName(text.slice(2));
    return 'problem' in domain ? { problem: `domain ${domain.problem}` } : { filter: `*@${domain.name}` };
  }
  const address = normalizeAddress(text);
  return 'problem' in address ? { problem: `${address.problem}, or *@<domain>` } : { filter: address.address };
}

const EVENT_TYPES_TEXT = WEBHOOK_EVENT_TYPES.map((t) => `\`${t}\``).join(', ');

export const CreateWebhookSchema = z.object({
  url: z.string(requiredOr('must be a string'))
    .max(WEBHOOK_URL_MAX, `must be at most ${WEBHOOK_URL_MAX} characters`)
    .refine(isHttpUrl, 'must be an http or https URL')
    .openapi({
      example: 'https://hooks.example.org/edgemail',
      description: `http or https, at most ${WEBHOOK_URL_MAX} characters. Its host must not resolve to loopback, RFC 1918 or other reserved space unless \`webhook.allow_private_targets\` is set; it is resolved (through \`dns.doh_url\`) at create and again before every delivery.`,
    }),
  events: z.array(z.string(requiredOr('must be a string')), requiredOr('must be an array of event types'))
    .min(1, 'must name at least one event type, or *')
    .max(WEBHOOK_EVENTS_MAX, `must name at most ${WEBHOOK_EVENTS_MAX} event types`)
    .superRefine((list, ctx) => {
      const unknown = list.find((e) => e !== '*' && !isWebhookEventType(e));
      if (unknown !== undefined) ctx.addIssue({ code: 'custom', message: `unknown event type ${unknown}` });
      else if (list.includes('*') && list.some((e) => e !== '*')) ctx.addIssue({ code: 'custom', message: 'wildcard * must be the only entry' });
    })
    .transform((list) => [...new Set(list)])
    .openapi({
      type: 'array',
      items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES, '*'] },
      minItems: 1,
      maxItems: WEBHOOK_EVENTS_MAX,
      example: ['email.sent', 'email.failed'],
      description: `1 to ${WEBHOOK_EVENTS_MAX} of ${EVENT_TYPES_TEXT}, or exactly \`["*"]\` for every type (also those added later). Duplicates collapse.`,
    }),
  filters: z.array(
    z.string(requiredOr('must be a string')).max(1000, 'must be at most 1000 characters').transform((input, ctx) => {
      const result = normalizeSenderFilter(input);
      if ('problem' in result) {
        ctx.addIssue({ code: 'custom', message: result.problem });
        return z.NEVER;
      }
      return result.filter;
    }),
    requiredOr('must be an array of sender filters'),
  )
    .max(WEBHOOK_FILTERS_MAX, `must hold at most ${WEBHOOK_FILTERS_MAX} filters`)
    .default([])
    .transform((list) => [...new Set(list)])
    .openapi({
      type: 'array',
      items: { type: 'string' },
      maxItems: WEBHOOK_FILTERS_MAX,
      example: ['billing@example.org', '*@example.com'],
      description: `Sender filters, at most ${WEBHOOK_FILTERS_MAX}: an exact address or \`*@<domain>\`, stored bare and lower case. Matched case-insensitively against the bare sender address; empty or omitted means every sender.`,
    }),
  // Optional rather than defaulted: a default would make it required in the generated clients' request types.
  ordered: z.boolean({ error: 'must be true or false' }).optional().openapi({
    description: 'Deliver the events of one email (`email.*`, keyed by `data.id`) or one inbound message (`inbound.received`, keyed by `data.id`) in the order they happened: while one is pending (retrying), the later ones of the same key wait; other keys flow. A head that fails for good (attempts ran out) releases the next. `project.*` and `webhook.*` events and redeliveries are not ordered. Default false.',
  }),
}).strict().openapi('CreateWebhook');

export const WebhookSchema = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  url: z.string().openapi({ example: 'https://hooks.example.org/edgemail' }),
  events: z.array(z.string()).openapi({ example: ['email.sent', 'email.failed'] }),
  filters: z.array(z.string()).openapi({ example: ['*@example.com'] }),
  created_at: Timestamp,
  secret_rotated_at: Timestamp.nullable().openapi({ description: 'When the signing secret was last rotated; null if never' }),
  ordered: z.boolean().openapi({ description: 'Events of one email or inbound message are delivered in order (docs/webhooks.md, "Ordered delivery")' }),
  status: z.enum(['enabled', 'disabled']).openapi({ description: '`disabled` after every attempt failed for `webhook.disable_after`: nothing is delivered or enqueued until `POST /api/v1/webhooks/{id}/enable`' }),
  disabled_at: Timestamp.nullable(),
  disabled_reason: z.string().nullable().openapi({ example: 'every delivery attempt failed since 2026-11-20T04:20:00.000Z (312 attempts)' }),
  failing_since: Timestamp.nullable().openapi({ description: 'Start of the first failed attempt since the last success; null while the last attempt succeeded' }),
  consecutive_failures: z.number().int().openapi({ description: 'Failed attempts since the last success' }),
}).openapi('Webhook');

export const WebhookWithSecretSchema = WebhookSchema.extend({
  secret: z.string().openapi({
    example: 'whsec_3q2-7wEh2bGzQ0y6m3u9Gm1cE2kqW0b1xvXk2Fq8Hn0',
    description: 'The signing secret (`whsec_` + 32 random bytes, base64url). Shown in this response only; stored sealed, never in a list. Key for the `X-Service-Signature` HMAC (docs/webhooks.md).',
  }),
}).openapi('WebhookWithSecret');

export const WebhookAttemptSchema = z.object({
  attempt: z.number().int().openapi({ description: '1 for the first request' }),
  started_at: Timestamp,
  duration_ms: z.number().int(),
  status_code: z.number().int().nullable().openapi({ description: 'The receiver\'s HTTP status; null when no answer came (`error` says why)' }),
  error: z.string().nullable(),
  response_excerpt: z.string().openapi({ description: 'The first bytes of the receiver\'s answer' }),
}).openapi('WebhookAttempt');

export const WebhookDeliverySchema = z.object({
  id: z.uuid(),
  webhook_id: z.uuid(),
  event: z.string().openapi({ example: 'email.sent' }),
  event_at: Timestamp.openapi({ description: 'The envelope\'s `timestamp`: when the event happened, the same on every attempt and redelivery' }),
  data: z.record(z.string(), z.unknown()).openapi({ description: 'The envelope\'s `data`' }),
  status: z.enum(DELIVERY_STATUSES).openapi({ description: '`pending` until a 2xx answer (`succeeded`) or until `webhook.max_attempts` attempts ran out (`failed`)' }),
  attempts: z.number().int().openapi({ description: 'Requests made (or in flight) so far' }),
  next_attempt_at: Timestamp.nullable().openapi({ description: 'While pending: when the next attempt is due; null otherwise' }),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  redelivery_of: z.uuid().nullable().openapi({ description: 'The delivery this one redelivers; null for an original' }),
  replay_id: z.uuid().nullable().openapi({ description: 'The replay that made this delivery (`POST /api/v1/webhooks/{id}/replay`); null otherwise' }),
  created_at: CursorTimestamp,
  completed_at: Timestamp.nullable(),
  attempt_log: z.array(WebhookAttemptSchema).openapi({ description: 'Every attempt, first first' }),
}).openapi('WebhookDelivery');

export const WebhookDeliveryCursorSchema = keysetCursor('WebhookDeliveryCursor');


export const ListDeliveriesQuery = keysetQuery('created_at', { max: DELIVERIES_LIMIT_MAX, fallback: DELIVERIES_LIMIT_DEFAULT }, {
  status: z.enum(DELIVERY_STATUSES, { error: 'must be pending, succeeded or failed' }).optional().openapi(queryParam('status')),
});

export const DeliveryParams = IdParams.extend({
  deliveryId: Uuid.openapi({ param: { name: 'deliveryId', in: 'path' }, example: '5f0c2a1e-8b7d-4e3f-9a6b-2c1d0e9f8a7b' }),
});

/** Replay bounds (docs/webhooks.md, "Replay"): the outbox keeps handed-over events this long, and one replay spans at most it. */
export const REPLAY_MAX_DAYS = 7;
/** Events one replay may send; a range holding more is refused, naming this bound. */
export const REPLAY_MAX_EVENTS = 10_000;

const ReplayTimestamp = z.iso.datetime({ offset: true, error: (issue) => (issue.input === undefined ? 'required' : 'must be an RFC 3339 timestamp') }).openapi({ example: '2026-11-26T04:00:00Z' });

export const ReplayWebhookSchema = z.object({
  since: ReplayTimestamp.openapi({ description: `Start of the range, included: events that happened at or after it. At most ${REPLAY_MAX_DAYS} days ago (the outbox keeps events that long).` }),
  until: ReplayTimestamp.openapi({ description: `End of the range, excluded; after \`since\` and at most ${REPLAY_MAX_DAYS} days after it.` }),
}).strict().openapi('ReplayWebhook');

export const WebhookReplaySchema = z.object({
  id: z.uuid().openapi({ description: 'The replay: each of its deliveries carries it as `replay_id`' }),
  webhook_id: z.uuid(),
  since: Timestamp,
  until: Timestamp,
  events: z.number().int().openapi({ description: 'Deliveries queued: one per event of the range the webhook takes' }),
}).openapi('WebhookReplay');

export type CreateWebhookInput = z.infer<typeof CreateWebhookSchema>;
export type ReplayWebhookInput = z.infer<typeof ReplayWebhookSchema>;
export type WebhookRecord = z.infer<typeof WebhookSchema>;
export type WebhookDeliveryRecord = z.infer<typeof WebhookDeliverySchema>;
export type WebhookAttemptRecord = z.infer<typeof WebhookAttemptSchema>;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export type DeliveryCursor = z.infer<typeof WebhookDeliveryCursorSchema>;
