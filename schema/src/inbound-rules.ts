// Routing rules for a project's inbound mail (docs/inbound-rules.md): tried in
// `position` order at ingest and, for refusals, on the relay node.
import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { projects } from './tenancy.js';

export const inboundRules = pgTable('inbound_rules', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  // 1..n within the project, dense: create, move and delete renumber the others.
  position: integer('position').notNull(),
  name: text('name').notNull().default(''),
  // The conditions (shared/src/inbound-rules/rule.ts RuleMatch), checked when saved.
  match: jsonb('match').$type<Record<string, unknown>>().notNull(),
  // store | webhooks | forward | refuse | drop
  action: text('action').notNull(),
  // refuse: the text after `550 5.7.1`.
  refuseText: text('refuse_text'),
  // webhooks: the project's webhooks that get `inbound.received`.
  webhookIds: uuid('webhook_ids').array(),
  // forward: the address mail is sent on to.
  forwardTo: text('forward_to'),
  // Messages this rule matched at ingest (drop: accepted, not stored), and when last.
  matchedCount: bigint('matched_count', { mode: 'number' }).notNull().default(0),
  lastMatchedAt: timestamp('last_matched_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().default(sql`now()`),
}, (t) => [
  index('inbound_rules_project_id_position_idx').on(t.projectId, t.position),
]);
