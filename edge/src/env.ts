// Worker bindings and the per-request context every route and middleware sees.
import type { Config } from '@edgemail/shared';
import type { RateLimiter, WindowVerdict } from './durable-objects/rate-limiter.js';
import type { WebhookDispatcher } from './durable-objects/webhook-dispatcher.js';
import type { Db } from './db/client.js';
import type { Principal } from './middleware/principal.js';
import type { RelayNodeRow } from './services/relay-nodes/find.js';

export interface Bindings {
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  /** One per project (`idFromName(projectId)`): webhook attempts and retry alarms. */
  WEBHOOK_DISPATCHER: DurableObjectNamespace<WebhookDispatcher>;
  /** Raw inbound messages and their attachments (keys: services/inbound/storage-keys.ts). */
  MAIL_STORE: R2Bucket;
  /** Set by the local stack only: the bridge serving Neon's protocols locally. */
  LOCAL_NEON_BRIDGE?: string;
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
