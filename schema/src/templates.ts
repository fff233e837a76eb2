// Templates: numbered versions per template, each with its localizations
// (subject and bodies per language), the one active version sends resolve,
// and the stylesheets a version's HTML is inlined with.
import { type AnyPgColumn, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { projects } from './tenancy.js';

/** CSS a version names by `stylesheet_id`; inlined into its HTML at render time. */
export const stylesheets = pgTable('stylesheets', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  css: text('css').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('stylesheets_project_id_name_idx').on(t.projectId, t.name),
]);

export const templates = pgTable('templates', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  description: text('description'),
  // BCP 47 tag of the language a render falls back to.
  defaultLanguage: text('default_language').notNull().default('en'),
  activeVersionId: uuid('active_version_id').references((): AnyPgColumn => templateVersions.id, { onDelete: 'set null' }),
  // The highest version number this template ever had: the next is one above
  // it, so a number is never reused, also after the highest is deleted.
  highestVersion: integer('highest_version').notNull().default(0),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('templates_project_id_name_idx').on(t.projectId, t.name),
  index('templates_project_id_created_at_idx').on(t.projectId, t.createdAt.desc(), t.id.desc()),
]);

export const templateVersions = pgTable('template_versions', {
  id: uuid('id').primaryKey().defaultRandom(),
  templateId: uuid('template_id').notNull().references(() => templates.id, { onDelete: 'cascade' }),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  version: integer('version').notNull(),
  stylesheetId: uuid('stylesheet_id').references(() => stylesheets.id, { onDelete: 'restrict' }),
  // A JSON document encoded as a string (the spec's type), used by preview.
  sampleData: text('sample_data'),
  // Set on its first activation: from then on its content never changes, so
  // activating it again rolls back exactly.
  firstActivatedAt: timestamp('first_activated_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('template_versions_template_id_version_idx').on(t.templateId, t.version),
]);

/** One language of a version: what a render produces for it. */
export const templateLocalizations = pgTable('template_localizations', {
  id: uuid('id').primaryKey().defaultRandom(),
  versionId: uuid('version_id').notNull().references(() => templateVersions.id, { onDelete: 'cascade' }),
  // BCP 47 tag, canonical case (`en`, `pt-BR`).
  language: text('language').notNull(),
  subject: text('subject').notNull(),
  html: text('html'),
  text: text('text'),
}, (t) => [
  uniqueIndex('template_localizations_version_id_language_idx').on(t.versionId, t.language),
]);
