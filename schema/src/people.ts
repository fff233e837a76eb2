// The console's people: invitations, password resets, second factors,
// passkeys, single sign-on. Tokens are never stored: only hex(sha256(token)).
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { memberGroups, memberRole, projects, users } from './tenancy.js';

// An invitation to a project by mail: single use, expiring. Accepting it
// creates the user (setting a password) or adds the membership.
export const invitations = pgTable('invitations', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  email: text('email').notNull(),
  role: memberRole('role').notNull().default('member'),
  groupId: uuid('group_id').references(() => memberGroups.id, { onDelete: 'set null' }),
  tokenHash: text('token_hash').notNull(),
  invitedBy: uuid('invited_by').references(() => users.id, { onDelete: 'set null' }),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  acceptedAt: timestamp('accepted_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('invitations_token_hash_idx').on(t.tokenHash),
  index('invitations_project_id_idx').on(t.projectId),
]);

// A password reset link: single use, expiring.
export const passwordResets = pgTable('password_resets', {
  id: uuid('id').primaryKey().defaultRandom(),
  userId: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  tokenHash: text('token_hash').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  usedAt: timestamp('used_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('password_resets_token_hash_idx').on(t.tokenHash),
  index('password_resets_user_id_idx').on(t.userId),
]);

// Two-factor recovery codes: hashed, single use.
export const recoveryCodes = pgTable('recovery_codes', {
  id: uuid('id').primaryKey().defaultRandom(),
  userId: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  codeHash: text('code_hash').notNull(),
  usedAt: timestamp('used_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('recovery_codes_user_id_code_hash_idx').on(t.userId, t.codeHash),
]);

// WebAuthn credentials (passkeys), several per user.
export const passkeys = pgTable('passkeys', {
  id: uuid('id').primaryKey().defaultRandom(),
  userId: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  // base64url credential id and COSE public key.
  credentialId: text('credential_id').notNull(),
  publicKey: text('public_key').notNull(),
  counter: bigint('counter', { mode: 'number' }).notNull().default(0),
  transports: text('transports').array().notNull().default(sql`'{}'::text[]`),
  aaguid: text('aaguid'),
  backedUp: boolean('backed_up').notNull().default(false),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
}, (t) => [
  uniqueIndex('passkeys_credential_id_idx').on(t.credentialId),
  index('passkeys_user_id_idx').on(t.userId),
]);

// Ceremony state that must be single use and short lived: WebAuthn
// challenges and OIDC authorization requests (state, nonce, PKCE verifier).
export const authChallenges = pgTable('auth_challenges', {
  // hex(sha256) of the WebAuthn challenge or the OIDC `state`.
  keyHash: text('key_hash').primaryKey(),
  // `webauthn.registration`, `webauthn.authentication` or `oidc`.
  purpose: text('purpose').notNull(),
  userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
  // The ceremony's own data (challenge, nonce, code_verifier, provider id, return path).
  data: text('data').notNull().default('{}'),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

// OpenID Connect providers, managed by the platform admin.
export const identityProviders = pgTable('identity_providers', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  issuer: text('issuer').notNull(),
  clientId: text('client_id').notNull(),
  clientSecretSealed: text('client_secret_sealed').notNull(),
  // Email domains whose addresses may sign in; empty allows none.
  allowedDomains: text('allowed_domains').array().notNull().default(sql`'{}'::text[]`),
  defaultProjectId: uuid('default_project_id').references(() => projects.id, { onDelete: 'set null' }),
  defaultRole: memberRole('default_role').notNull().default('member'),
  enabled: boolean('enabled').notNull().default(true),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [uniqueIndex('identity_providers_name_idx').on(t.name)]);

// A user's identity at a provider (`sub`), found again on the next sign-in.
export const userIdentities = pgTable('user_identities', {
  id: uuid('id').primaryKey().defaultRandom(),
  providerId: uuid('provider_id').notNull().references(() => identityProviders.id, { onDelete: 'cascade' }),
  subject: text('subject').notNull(),
  userId: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('user_identities_provider_id_subject_idx').on(t.providerId, t.subject),
  index('user_identities_user_id_idx').on(t.userId),
]);

// Installation settings changed at run time (`/api/v1/admin/settings`), over
// the environment's; only the settings documented as safe to change live.
export const installationSettings = pgTable('installation_settings', {
  name: text('name').primaryKey(),
  // The value as JSON text, checked by the setting's own schema.
  value: text('value').notNull(),
  updatedBy: uuid('updated_by'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
