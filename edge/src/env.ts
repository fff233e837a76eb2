// Worker bindings and the per-request context every route and middleware sees.
import type { Config } from '@edgemail/shared';
import type { RateLimiter, WindowVerdict } from './durable-objects/rate-limiter.js';
import type { Db } from './db/client.js';
import type { Principal } from './middleware/principal.js';
import type { RelayNodeRow } from './services/relay-nodes/find.js';
import type { ApiKeyRow } from './services/auth/find-credential.js';

/**
 * What the services call on a project's WebhookDispatcher (which implements
 * it). Named here rather than imported: the dispatcher runs the services and
 * reads these bindings, so importing its class would close a circle.
 */
export interface WebhookDispatcherRpc extends Rpc.DurableObjectBranded {
  /** Turns committed outbox rows into deliveries and makes their first attempts; resolves once they are recorded. */
  dispatch(projectId: string, outboxIds: number[]): Promise<void>;
  /** Attempts every delivery of the project that is due now. */
  wake(projectId: string): Promise<void>;
}

/** One event for a project's console stream, as its publishers hand it over (services/event-stream/events.ts). */
export interface StreamEventInput {
  /** Where it comes from, unique per event (`outbox:<id>`, `audit:<id>`, `attempt:<delivery>:<n>`): a repeat is dropped. */
  source: string;
  /** The SSE `event:` name: `inbound.received`, `email.status`, `webhook.delivery` or `audit`. */
  name: string;
  /** The JSON `data:` line: `{type, at, data}`, metadata only. */
  payload: string;
}

/** What the publishers call on a project's EventStream (named here for the same reason as the dispatcher's). */
export interface EventStreamRpc extends Rpc.DurableObjectBranded {
  /** Committed outbox rows of the project: read, mapped and appended to the stream. */
  publishOutbox(projectId: string, outboxIds: number[]): Promise<void>;
  /** Events whose publisher already holds their metadata (audit events, webhook attempt results). */
  publish(projectId: string, events: StreamEventInput[]): Promise<void>;
}

/** What a project API key's ApiKeyGate answers: its window's verdict (null when not counted) and the key's row. */
export interface ApiKeyAdmission {
  verdict: WindowVerdict | null;
  key: ApiKeyRow | null;
  /** The gate could not read the key: the database did not answer (the caller looks it up itself, and answers 503). */
  databaseUnavailable?: true;
}

/** What the authenticate middleware calls on a key's ApiKeyGate (named here for the same reason). */
export interface ApiKeyGateRpc extends Rpc.DurableObjectBranded {
  /** Counts the request against `limit` (null: not counted) and reads the key; a refused request's key is not read (null). */
  admit(keyPrefix: string, tokenHash: string, limit: number | null, windowMs: number): Promise<ApiKeyAdmission>;
}

export interface Bindings {
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  /** One per project API key (`idFromName(hex(sha256(token)))`): its rate window and its look-up in one call. */
  API_KEY_GATE: DurableObjectNamespace<ApiKeyGateRpc>;
  /** One per project (`idFromName(projectId)`): webhook attempts and retry alarms. */
  WEBHOOK_DISPATCHER: DurableObjectNamespace<WebhookDispatcherRpc>;
  /** One per project (`idFromName(projectId)`): the console's live event stream (SSE) and its resume window. */
  EVENT_STREAM: DurableObjectNamespace<EventStreamRpc>;
  /** Raw inbound messages and their attachments (keys: services/inbound-emails/storage-keys.ts). */
  MAIL_STORE: R2Bucket;
  /** Set by the local stack only: the bridge serving Neon's protocols locally. */
  LOCAL_NEON_BRIDGE?: string;
  /** Set by the local stack only: the secret of its cron trigger (edge/src/index.ts, localScheduledTrigger). */
  LOCAL_SCHEDULED_SECRET?: string;
  [setting: `SERVICE_${string}`]: string | undefined;
}

export interface Variables {
  config: Config;
  db: Db;
  clientIp: string;
  principal: Principal;
  /** The calling relay node, on `/relay/v1` routes that take a node credential. */
  relayNode: RelayNodeRow;
  /** The project the request acts in; null for platform work without a project. */
  projectId: string | null;
  /** Set for mutating routes by their declaration; read by the audit middleware. */
  auditType: string | undefined;
  /** The rate limiter's verdict on this request, when a limiter counted it. */
  rateLimit: WindowVerdict | undefined;
}

export type AppEnv = { Bindings: Bindings; Variables: Variables };
