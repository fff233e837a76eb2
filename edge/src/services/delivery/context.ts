// What a relay node's outbound call gives the delivery services: the request's
// database handle and settings, the node, and how to keep the hand-over of the
// events written alive after the answer (`executionCtx.waitUntil`).
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import type { Bindings } from '../../env.js';
import type { NodeScope } from '../relay-nodes/domains.js';
import { handOverOutbox } from '../webhook-outbox/hand-over.js';
import type { OutboxRows } from '../emails/events.js';

export interface DeliveryContext {
  env: Bindings;
  db: Db;
  config: Config;
  node: { id: string } & NodeScope;
  waitUntil: (p: Promise<unknown>) => void;
}

/** Hands the outbox rows written, by project, to the dispatcher and the event stream after the answer. */
export function handOver(ctx: DeliveryContext, events: Map<string, OutboxRows>): void {
  for (const [projectId, ids] of events) ctx.waitUntil(handOverOutbox(ctx.env, projectId, ids));
}
