// Plans, users, projects and who belongs to which project.
import { sql } from 'drizzle-orm';
import { type AnyPgColumn, bigint, boolean, check, doublePrecision, foreignKey, index, integer, pgEnum, pgTable, text, timestamp, unique, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

export const plans = pgTable('plans', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  hourlyEmailLimit: integer('hourly_email_limit').notNull().default(0),
  dailyEmailLimit: integer('daily_email_limit').notNull().default(0),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [uniqueIndex('plans_name_idx').on(t.name)]);

export const users = pgTable('users', {
  id: uuid('id').primaryKey().defaultRandom(),
  email: text('email').notNull(),
  name: text('name').notNull().default(''),
  // `scrypt$<N>$<r>$<p>$<base64 salt>$<base64 hash>` (the console's password hash).
  passwordHash: text('password_hash'),
  emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true }),
  // Password sign-in lockout (exact across the deployment: the row is the
  // counter, changed by one atomic statement per attempt).
  failedPasswordCount: integer('failed_password_count').notNull().default(0),
  passwordLockedUntil: timestamp('password_locked_until', { withTimezone: true }),
  // TOTP (RFC 6238): the sealed base32 secret; enabled once confirmed with a code.
  totpSecretSealed: text('totp_secret_sealed'),
  totpEnabledAt: timestamp('totp_enabled_at', { withTimezone: true }),
  // The last accepted time step: a code is never accepted twice.
  totpLastStep: bigint('totp_last_step', { mode: 'number' }),
  // Bumped to sign out every session at once (sessions older than it are void).
  sessionsValidAfter: timestamp('sessions_valid_after', { withTimezone: true }),
  // Set once the user has a project; the project a session falls back to.
  defaultProjectId: uuid('default_project_id').references((): AnyPgColumn => projects.id, { onDelete: 'set null' }),
  // A platform admin in the console: a session of this user may use /api/v1/admin (docs/console.md,
  // "Platform admins in the console"). Granted and revoked by an operator command or another admin.
  platformAdmin: boolean('platform_admin').notNull().default(false),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [uniqueIndex('users_email_idx').on(sql`lower(${t.email})`)]);

export const projects = pgTable('projects', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  planId: uuid('plan_id').references(() => plans.id, { onDelete: 'restrict' }),
  // The project's SSO policy: members sign in through an identity provider only.
  // Changed by a session of the owner only (never by a project key).
  ssoRequired: boolean('sso_required').notNull().default(false),
  // The identity providers whose sessions the SSO policy accepts. A deleted
  // provider's id may linger here: it matches no session.
  ssoProviderIds: uuid('sso_provider_ids').array().notNull().default(sql`'{}'::uuid[]`),
  // Inbound spam thresholds on rspamd's score (docs/inbound.md, Spam scoring): refuse at DATA, or mark the record; null: off.
  inboundSpamRejectScore: doublePrecision('inbound_spam_reject_score'),
  inboundSpamMarkScore: doublePrecision('inbound_spam_mark_score'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const memberRole = pgEnum('member_role', ['owner', 'admin', 'member']);

/** A custom group: a named permission list inside one project; never `*`. */
export const memberGroups = pgTable('member_groups', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  permissions: text('permissions').array().notNull().default(sql`'{}'::text[]`),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('member_groups_project_id_name_idx').on(t.projectId, t.name),
  // The target of memberships' (group_id, project_id) key.
  unique('member_groups_id_project_id_key').on(t.id, t.projectId),
  check('member_groups_no_wildcard', sql`NOT ('*' = ANY(${t.permissions}))`),
]);

export const memberships = pgTable('memberships', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  userId: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  role: memberRole('role').notNull().default('member'),
  // A member in a custom group holds the group's permissions instead of the role's.
  groupId: uuid('group_id').references(() => memberGroups.id, { onDelete: 'set null' }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('memberships_project_id_user_id_idx').on(t.projectId, t.userId),
  index('memberships_user_id_idx').on(t.userId),
  // A member's group belongs to the member's project. NO ACTION is checked at the
  // end of the statement, after deleting a group has set group_id to null.
  foreignKey({
    name: 'memberships_group_same_project_fk',
    columns: [t.groupId, t.projectId],
    foreignColumns: [memberGroups.id, memberGroups.projectId],
  }),
]);
