// Relay nodes: the SMTP machines. Each enrols with a `relay:write` key of a
// project (which then manages it) and gets a node credential of its own.
import { bigint, boolean, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid, index } from 'drizzle-orm/pg-core';
import { projects } from './tenancy.js';

export const relayNodes = pgTable('relay_nodes', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  // Node credential `myr_<8>_<secret>`: only hex(sha256(token)) is stored.
  keyPrefix: text('key_prefix').notNull(),
  keyHash: text('key_hash').notNull(),
  // A node serves the domains of its own project only, unless the operator made it
  // installation-wide (`edgemail relay scope`): then every project's, and the shared certificate.
  installationWide: boolean('installation_wide').notNull().default(false),
  revoked: boolean('revoked').notNull().default(false),
  revokedAt: timestamp('revoked_at', { withTimezone: true }),
  // Reported by the last heartbeat.
  version: text('version'),
  listeners: jsonb('listeners').$type<unknown[]>().notNull().default([]),
  tls: jsonb('tls').$type<Record<string, unknown>>().notNull().default({}),
  spoolDepth: integer('spool_depth').notNull().default(0),
  // Messages in the node's `dead/` folder (the edge refused them for good) and their bytes.
  deadLetters: integer('dead_letters').notNull().default(0),
  deadLetterBytes: bigint('dead_letter_bytes', { mode: 'number' }).notNull().default(0),
  lastHeartbeatAt: timestamp('last_heartbeat_at', { withTimezone: true }),
  lastAddress: text('last_address'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('relay_nodes_key_prefix_idx').on(t.keyPrefix),
  index('relay_nodes_project_id_created_at_idx').on(t.projectId, t.createdAt),
]);
