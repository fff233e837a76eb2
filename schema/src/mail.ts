// Mail a project owns: its domains, the senders it refuses, and the mail
// that arrived for it. Raw bytes and attachments live in R2; rows hold their keys.
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { projects } from './tenancy.js';
import { relayNodes } from './relay.js';

/**
 * A project's registration of a domain name. Several projects may register a
 * name; the one that proves ownership in DNS (its own DKIM key published)
 * receives and sends its mail, the others' registrations stay unproven.
 */
export const domains = pgTable('domains', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  // Lower case, no trailing dot.
  name: text('name').notNull(),
  // DKIM: the key pair mail from this domain is signed with (private half
  // sealed, context `domains.dkim_private_key`), published under `<selector>._domainkey`.
  dkimSelector: text('dkim_selector'),
  // `rsa` (2048 bits) or `ed25519`.
  dkimAlgorithm: text('dkim_algorithm'),
  dkimPrivateKeySealed: text('dkim_private_key_sealed'),
  // The `p=` value: base64 of the public key (SPKI DER for RSA, the raw 32 bytes for Ed25519).
  dkimPublicKey: text('dkim_public_key'),
  // The last verification: each record's verdict (`dkim`, `spf`, `dmarc`, `mx`) and why.
  verification: jsonb('verification').$type<Record<string, { ok: boolean; found?: string[]; problem?: string }>>(),
  // Set while the required records are published; cleared when a check finds them gone.
  verifiedAt: timestamp('verified_at', { withTimezone: true }),
  lastCheckedAt: timestamp('last_checked_at', { withTimezone: true }),
  // Set by the check that first found this registration's DKIM key published:
  // from then on the name is this project's (relay nodes accept its mail,
  // ingest stores it here). Kept when the record is lost later, until another
  // project proves the name (docs/inbound.md, "Domain ownership").
  ownershipProvenAt: timestamp('ownership_proven_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  // One proven owner per name; one registration per project and name.
  uniqueIndex('domains_name_owner_idx').on(t.name).where(sql`${t.ownershipProvenAt} IS NOT NULL`),
  uniqueIndex('domains_project_id_name_idx').on(t.projectId, t.name),
  index('domains_project_id_created_at_idx').on(t.projectId, t.createdAt),
]);

/**
 * Bytes of raw inbound mail each project keeps stored, counted by the cron
 * every minute (a sum over inbound_emails, never on the ingest path), and
 * whether that reaches `inbound.storage_quota_bytes`: relay nodes then answer
 * RCPT for the project's domains with `452 4.2.2`.
 */
export const inboundUsage = pgTable('inbound_usage', {
  projectId: uuid('project_id').primaryKey().references(() => projects.id, { onDelete: 'cascade' }),
  storedBytes: bigint('stored_bytes', { mode: 'number' }).notNull(),
  quotaReached: boolean('quota_reached').notNull(),
});

export const suppressionReason = pgEnum('suppression_reason', ['hard_bounce', 'complaint', 'manual', 'unsubscribe']);

/**
 * Addresses a project does not send to (a send records them `suppressed`) and
 * whose mail it refuses (stored as `rejected`). Hard bounces and complaints
 * add them; an entry past `expires_at` no longer applies.
 */
export const suppressions = pgTable('suppressions', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  // The bare address, lower case.
  address: text('address').notNull(),
  reason: suppressionReason('reason').notNull().default('manual'),
  // Free text the creator gave (or what a reason before the enum said).
  detail: text('detail'),
  // The email whose bounce or complaint added it (no foreign key: the
  // suppression outlives a purged email row).
  sourceEmailId: uuid('source_email_id'),
  expiresAt: timestamp('expires_at', { withTimezone: true }),
  // '' applies to every stream; a stream's name applies to that stream only
  // (an unsubscribe from broadcast mail still lets transactional mail through).
  stream: text('stream').notNull().default(''),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('suppressions_project_id_address_stream_idx').on(t.projectId, t.address, t.stream),
  index('suppressions_project_id_created_at_idx').on(t.projectId, t.createdAt.desc(), t.id.desc()),
]);

export const inboundStatus = pgEnum('inbound_status', ['received', 'rejected', 'failed']);

export interface InboundAttachment { filename: string; content_type: string; size: number }
export interface InboundAuth { spf: string; dkim: string; dmarc: string; aligned: boolean; client_ip: string }
/** rspamd's verdict on an inbound message (docs/inbound.md, Spam scoring); `marked` by the project's threshold at ingest. */
export interface InboundSpam { score: number; required_score: number | null; action: string; symbols: string[]; marked: boolean }

/** One arrived message, per project it was addressed to. */
export const inboundEmails = pgTable('inbound_emails', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  // Kept when the domain is deleted later: the mail still arrived.
  domainId: uuid('domain_id').references(() => domains.id, { onDelete: 'set null' }),
  nodeId: uuid('node_id').references(() => relayNodes.id, { onDelete: 'set null' }),
  // The relay node's spool id: a message forwarded twice is stored once.
  spoolId: text('spool_id').notNull(),
  messageId: text('message_id').notNull().default(''),
  sender: text('sender').notNull(),
  recipients: text('recipients').array().notNull().default(sql`'{}'::text[]`),
  subject: text('subject').notNull().default(''),
  textBody: text('text_body').notNull().default(''),
  htmlBody: text('html_body').notNull().default(''),
  // The reply without its quoted history, and its signature block (null when none), found at ingest (docs/inbound.md).
  strippedText: text('stripped_text').notNull().default(''),
  strippedSignature: text('stripped_signature'),
  // A string per header that occurs once, its values in order for one that occurs more often.
  headers: jsonb('headers').$type<Record<string, string | string[]>>().notNull().default({}),
  attachments: jsonb('attachments').$type<InboundAttachment[]>().notNull().default([]),
  auth: jsonb('auth').$type<InboundAuth>().notNull(),
  // rspamd's verdict, when the relay node asked one (null: not scored, rspamd off or unreachable).
  spam: jsonb('spam').$type<InboundSpam>(),
  // R2 key of the raw message; null when the bytes were not stored.
  rawKey: text('raw_key'),
  size: integer('size').notNull(),
  status: inboundStatus('status').notNull(),
  // Why a message is `rejected` or `failed`.
  statusReason: text('status_reason'),
  receivedAt: timestamp('received_at', { withTimezone: true }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('inbound_emails_spool_id_project_id_idx').on(t.spoolId, t.projectId),
  // Keyset paging, newest first: (received_at, id) < (before, before_id).
  index('inbound_emails_project_id_received_at_id_idx').on(t.projectId, t.receivedAt.desc(), t.id.desc()),
  index('inbound_emails_project_id_status_received_at_id_idx').on(t.projectId, t.status, t.receivedAt.desc(), t.id.desc()),
  // The storage count's sum per project (usage-count.ts), read from the index alone, not the wide rows.
  index('inbound_emails_project_id_size_idx').on(t.projectId, t.size),
]);
