// Credentials: project API keys, platform credentials and browser sessions.
// Tokens are never stored: only hex(sha256(token)).
import { sql } from 'drizzle-orm';
import { boolean, index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { identityProviders } from './people.js';
import { projects, users } from './tenancy.js';

export const apiKeys = pgTable('api_keys', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  keyPrefix: text('key_prefix').notNull(),
  keyHash: text('key_hash').notNull(),
  permissions: text('permissions').array().notNull().default(sql`'{}'::text[]`),
  allowedIps: text('allowed_ips').array().notNull().default(sql`'{}'::text[]`),
  expiresAt: timestamp('expires_at', { withTimezone: true }),
  sandbox: boolean('sandbox').notNull().default(false),
  revoked: boolean('revoked').notNull().default(false),
  revokedAt: timestamp('revoked_at', { withTimezone: true }),
  lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
  createdBy: uuid('created_by'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('api_keys_key_prefix_idx').on(t.keyPrefix),
  index('api_keys_project_id_created_at_idx').on(t.projectId, t.createdAt),
]);

export const platformCredentials = pgTable('platform_credentials', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  keyPrefix: text('key_prefix').notNull(),
  keyHash: text('key_hash').notNull(),
  allowedIps: text('allowed_ips').array().notNull().default(sql`'{}'::text[]`),
  expiresAt: timestamp('expires_at', { withTimezone: true }),
  revoked: boolean('revoked').notNull().default(false),
  revokedAt: timestamp('revoked_at', { withTimezone: true }),
  lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [uniqueIndex('platform_credentials_key_prefix_idx').on(t.keyPrefix)]);

export const sessions = pgTable('sessions', {
  id: uuid('id').primaryKey().defaultRandom(),
  userId: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  tokenHash: text('token_hash').notNull(),
  // Absolute expiry; the idle expiry is last_seen_at plus the idle period.
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
  // How it was opened: `password`, `passkey` or `oidc`.
  method: text('method').notNull().default('password'),
  // The identity provider of an `oidc` session: deleting the provider ends the
  // session (cascade); disabling it ends it at the next request.
  identityProviderId: uuid('identity_provider_id').references(() => identityProviders.id, { onDelete: 'cascade' }),
  // The project the console works in; null: the user's default project.
  currentProjectId: uuid('current_project_id').references(() => projects.id, { onDelete: 'set null' }),
  clientIp: text('client_ip'),
  userAgent: text('user_agent'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('sessions_token_hash_idx').on(t.tokenHash),
  index('sessions_user_id_idx').on(t.userId),
]);
