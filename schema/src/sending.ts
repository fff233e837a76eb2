// Outbound mail: what a project sent (one message, one row per recipient),
// each attempt a relay node made, the SMTP servers it relays through, and the
// idempotency keys of the send routes.
import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, date, index, integer, jsonb, pgEnum, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { projects } from './tenancy.js';
import { domains } from './mail.js';
import { relayNodes } from './relay.js';

export interface OutboundAttachment { filename: string; content_type: string; size: number; r2_key: string }

/** One accepted send: the content, shared by its recipients' rows. */
export const outboundMessages = pgTable('outbound_messages', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  domainId: uuid('domain_id').references(() => domains.id, { onDelete: 'set null' }),
  // The RFC 5322 Message-ID, `<uuid@from-domain>`.
  messageId: text('message_id').notNull(),
  from: text('from').notNull(),
  to: text('to').array().notNull().default(sql`'{}'::text[]`),
  cc: text('cc').array().notNull().default(sql`'{}'::text[]`),
  bcc: text('bcc').array().notNull().default(sql`'{}'::text[]`),
  replyTo: text('reply_to').array().notNull().default(sql`'{}'::text[]`),
  subject: text('subject').notNull(),
  html: text('html'),
  text: text('text'),
  // Custom headers as given (name → value), readable later in the log.
  headers: jsonb('headers').$type<Record<string, string>>().notNull().default({}),
  attachments: jsonb('attachments').$type<OutboundAttachment[]>().notNull().default([]),
  tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
  // Sent with a sandbox key: captured, never delivered.
  sandbox: boolean('sandbox').notNull().default(false),
  // How it was submitted: `api` (the send routes), `smtp` (the submission
  // listener) or `test` (a template's send-test).
  origin: text('origin').notNull().default('api'),
  // `send_at` of a scheduled send: its recipients are not claimed before it.
  sendAt: timestamp('send_at', { withTimezone: true }),
  // The template and version a template send rendered (no foreign key: the log keeps them after a delete).
  templateId: uuid('template_id'),
  templateVersionId: uuid('template_version_id'),
  // The message stream (docs/sending.md, "Streams"): `transactional`,
  // `broadcast` or a project-defined one.
  stream: text('stream').notNull().default('transactional'),
  // Carries List-Unsubscribe and List-Unsubscribe-Post (RFC 8058): always on
  // a broadcast stream, on a transactional one when the send asked.
  listUnsubscribe: boolean('list_unsubscribe').notNull().default(false),
  // The send's own open and click tracking (`{opens, clicks}`, each optional),
  // over its from-domain's (docs/tracking.md); null: the domain's.
  tracking: jsonb('tracking').$type<{ opens?: boolean; clicks?: boolean }>(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  index('outbound_messages_project_id_created_at_idx').on(t.projectId, t.createdAt),
]);

export const emailStatus = pgEnum('email_status', ['queued', 'sending', 'sent', 'failed', 'suppressed', 'captured', 'bounced', 'complained', 'canceled']);

/** One recipient of one message: the unit of plan limits, delivery and the email log. */
export const emails = pgTable('emails', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  messageId: uuid('message_id').notNull().references(() => outboundMessages.id, { onDelete: 'cascade' }),
  // The bare address, as given (lower-cased domain).
  recipient: text('recipient').notNull(),
  // `to`, `cc` or `bcc`.
  kind: text('kind').notNull(),
  status: emailStatus('status').notNull(),
  attempts: integer('attempts').notNull().default(0),
  // While queued: when a node may claim it. While sending: when the lease ends.
  nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
  leaseNodeId: uuid('lease_node_id').references(() => relayNodes.id, { onDelete: 'set null' }),
  // The node that delivered it (or made the last attempt).
  nodeId: uuid('node_id').references(() => relayNodes.id, { onDelete: 'set null' }),
  // The receiving server's last reply, or why it failed.
  errorMessage: text('error_message'),
  smtpReply: text('smtp_reply'),
  sentAt: timestamp('sent_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  // Plan limits: the project's rows of the trailing hour and day.
  index('emails_project_id_created_at_idx').on(t.projectId, t.createdAt.desc(), t.id.desc()),
  index('emails_project_id_status_created_at_idx').on(t.projectId, t.status, t.createdAt.desc(), t.id.desc()),
  index('emails_project_id_recipient_idx').on(t.projectId, t.recipient),
  index('emails_message_id_idx').on(t.messageId),
  // The claim's question: what is due for delivery.
  index('emails_due_idx').on(t.nextAttemptAt).where(sql`${t.status} in ('queued', 'sending')`),
]);

/** Every delivery attempt a relay node reported. */
export const emailAttempts = pgTable('email_attempts', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  emailId: uuid('email_id').notNull().references(() => emails.id, { onDelete: 'cascade' }),
  attempt: integer('attempt').notNull(),
  nodeId: uuid('node_id').references(() => relayNodes.id, { onDelete: 'set null' }),
  // `sent`, `deferred` (4xx, retried) or `failed` (5xx).
  outcome: text('outcome').notNull(),
  smtpCode: integer('smtp_code'),
  reply: text('reply').notNull().default(''),
  // The server it spoke to (MX host, SMTP server or pool entry).
  server: text('server'),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
  durationMs: integer('duration_ms').notNull(),
}, (t) => [
  uniqueIndex('email_attempts_email_id_attempt_idx').on(t.emailId, t.attempt),
  // The retention purge's question: attempts started before the cutoff (delivery-records/purge.ts).
  index('email_attempts_started_at_idx').on(t.startedAt),
]);

/**
 * SMTP servers mail is relayed through: a project's own (project_id set), or
 * the platform's shared pool (project_id null, managed on the admin surface).
 */
export const smtpServers = pgTable('smtp_servers', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').references(() => projects.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  host: text('host').notNull(),
  port: integer('port').notNull(),
  // `starttls`, `tls` (implicit) or `none`.
  security: text('security').notNull(),
  username: text('username'),
  // AES-GCM under database.crypto.encryption_key (context `smtp_servers.password`); never returned.
  passwordSealed: text('password_sealed'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  index('smtp_servers_project_id_idx').on(t.projectId),
]);

/** `Idempotency-Key` of the send routes, kept 24 hours: the first answer is replayed. */
export const idempotencyKeys = pgTable('idempotency_keys', {
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  key: text('key').notNull(),
  route: text('route').notNull(),
  // sha256 of the request body: the same key with another body is 409.
  requestHash: text('request_hash').notNull(),
  responseStatus: integer('response_status').notNull(),
  responseBody: jsonb('response_body').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  primaryKey({ columns: [t.projectId, t.key] }),
  index('idempotency_keys_created_at_idx').on(t.createdAt),
]);

export const bounceType = pgEnum('bounce_type', ['hard', 'soft', 'complaint']);

/**
 * A bounce or complaint about one outbound email: a synchronous 5xx at
 * delivery, a DSN or ARF report that came back to the VERP return path, an
 * SES notification, or a simulator address.
 */
export const bounces = pgTable('bounces', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  // The email it is about; null once that row is purged.
  emailId: uuid('email_id').references(() => emails.id, { onDelete: 'set null' }),
  recipient: text('recipient').notNull(),
  type: bounceType('type').notNull(),
  // `smtp` (the delivery's own reply), `dsn`, `arf`, `ses` or `simulator`.
  source: text('source').notNull(),
  // What identifies the report at its source (a spool id, an SNS MessageId):
  // the same report recorded twice is one row.
  sourceRef: text('source_ref'),
  smtpCode: integer('smtp_code'),
  // The enhanced status code, e.g. `5.1.1`.
  status: text('status'),
  diagnostic: text('diagnostic'),
  remoteMta: text('remote_mta'),
  // ARF `Feedback-Type` (`abuse`, …) of a complaint.
  feedbackType: text('feedback_type'),
  // The Message-ID of the original message, as the report quoted it.
  originalMessageId: text('original_message_id'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  index('bounces_project_id_created_at_idx').on(t.projectId, t.createdAt.desc(), t.id.desc()),
  index('bounces_email_id_idx').on(t.emailId),
  uniqueIndex('bounces_project_id_source_ref_idx').on(t.projectId, t.source, t.sourceRef).where(sql`${t.sourceRef} is not null`),
]);

/**
 * The analytics aggregate: emails per project, UTC day of creation, from
 * domain, tag and status, kept by a trigger on `emails` (migration 0009), so
 * that a range of days is read without scanning the emails. `tag` is '' for
 * the row that counts every email; each tag of a message has its own rows too.
 */
export const emailDailyCounts = pgTable('email_daily_counts', {
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  day: date('day', { mode: 'string' }).notNull(),
  fromDomain: text('from_domain').notNull(),
  tag: text('tag').notNull().default(''),
  status: emailStatus('status').notNull(),
  // The message's stream (migration 0016 adds it to the triggers).
  stream: text('stream').notNull().default('transactional'),
  count: bigint('count', { mode: 'number' }).notNull().default(0),
}, (t) => [
  primaryKey({ columns: [t.projectId, t.day, t.fromDomain, t.tag, t.status, t.stream] }),
]);
