// Upgrading to migration 0007 (domain ownership) on real PostgreSQL: a
// database at 0006 with the registrations an installation may hold, then the
// real migrator applies 0007. Ownership is sticky, so every registration that
// was ever verified keeps its name (and its mail); one made before sending
// existed (no key yet) keeps it too; the others wait for their proof.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { inject } from 'vitest';
import pg from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { migrationsFolder, runMigrations } from '@edgemail/schema/migrate';
import { pgUrl } from '../edge/local/pg-credentials.js';

const OWNERSHIP_MIGRATION = '0007_domain_ownership';
let scratch: string;
let admin: pg.Client;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'migrations-0006-'));
  admin = new pg.Client({ connectionString: pgUrl(inject('pgAdmin'), inject('pgPort'), 'postgres') });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** A fresh database migrated up to `before` (the folder copied, the journal cut there), and a client on it. */
async function databaseBefore(before: string): Promise<{ url: string; client: pg.Client }> {
  const folder = join(scratch, before);
  cpSync(migrationsFolder, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
  const cut = journal.entries.findIndex((e) => e.tag === before);
  expect(cut).toBeGreaterThan(0);
  writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, cut) }));
  const database = `up_${crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const app = inject('pgApp');
  await admin.query(`CREATE DATABASE ${database} OWNER ${admin.escapeIdentifier(app.user)}`);
  const url = pgUrl(app, inject('pgPort'), database);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('SET client_min_messages = warning');
  await migrate(drizzle(client), { migrationsFolder: folder });
  return { url, client };
}

test('0007 keeps the name of every registration that was ever verified, and of a legacy one with no key; the others wait for proof', async () => {
  const { url, client } = await databaseBefore(OWNERSHIP_MIGRATION);
  try {
    const { rows: [project] } = await client.query(`INSERT INTO projects (name) VALUES ('acme') RETURNING id`);
    const key = `dkim_selector, dkim_algorithm, dkim_private_key_sealed, dkim_public_key`;
    const keyValues = `'em1', 'ed25519', 'sealed', 'cHVibGlj'`;
    const insert = async (name: string, columns: string, values: string) =>
      (await client.query(`INSERT INTO domains (project_id, name${columns ? `, ${columns}` : ''}) VALUES ($1, $2${values ? `, ${values}` : ''}) RETURNING id`, [project.id, name])).rows[0].id as string;
    const ids = {
      // Verified and still passing.
      verified: await insert('verified.test', `${key}, verification, verified_at, last_checked_at`,
        `${keyValues}, '{"dkim":{"ok":true},"spf":{"ok":true}}', '2026-11-01T10:00:00Z', '2026-11-20T10:00:00Z'`),
      // Verified once, its records lost since: `failed`, verified_at cleared (check.ts).
      lost: await insert('lost.test', `${key}, verification, last_checked_at`,
        `${keyValues}, '{"dkim":{"ok":false,"problem":"missing"},"spf":{"ok":true},"failed":{"ok":false,"problem":"DKIM record em1._domainkey.lost.test is missing"}}', '2026-11-20T10:00:00Z'`),
      // Its DKIM record found, SPF not yet: never verified, but proven.
      dkimFound: await insert('dkim-found.test', `${key}, verification, last_checked_at`,
        `${keyValues}, '{"dkim":{"ok":true},"spf":{"ok":false,"problem":"missing"}}', '2026-11-20T10:00:00Z'`),
      // Registered before sending existed: no key, never checked; it received by registration alone.
      legacy: await insert('legacy.test', '', ''),
      // A key, never found in DNS: nothing proven.
      pending: await insert('pending.test', `${key}, verification, last_checked_at`,
        `${keyValues}, '{"dkim":{"ok":false,"problem":"missing"}}', '2026-11-20T10:00:00Z'`),
      neverChecked: await insert('never-checked.test', key, keyValues),
    };

    await runMigrations(url); // the real migrator: only 0007 is left to apply

    const { rows } = await client.query(`SELECT id, ownership_proven_at FROM domains`);
    const proven = Object.fromEntries(rows.map((r) => [r.id, r.ownership_proven_at?.toISOString() ?? null]));
    expect(proven[ids.verified]).toBe('2026-11-01T10:00:00.000Z');
    expect(proven[ids.lost]).toBe('2026-11-20T10:00:00.000Z');
    expect(proven[ids.dkimFound]).toBe('2026-11-20T10:00:00.000Z');
    expect(proven[ids.legacy]).not.toBeNull();
    expect(proven[ids.pending]).toBeNull();
    expect(proven[ids.neverChecked]).toBeNull();
    const { rows: [applied] } = await client.query(`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`);
    expect(applied.n).toBe(JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')).entries.length);
  } finally {
    await client.end();
  }
});

test('0007 with two ever-verified registrations of one name (possible only where 0006\'s unique index was altered by hand): the oldest keeps it, the index holds', async () => {
  const { url, client } = await databaseBefore(OWNERSHIP_MIGRATION);
  try {
    await client.query('DROP INDEX domains_name_idx; CREATE INDEX domains_name_idx ON domains (name)');
    const { rows: [a] } = await client.query(`INSERT INTO projects (name) VALUES ('a') RETURNING id`);
    const { rows: [b] } = await client.query(`INSERT INTO projects (name) VALUES ('b') RETURNING id`);
    const insert = async (projectId: string, createdAt: string) => (await client.query(
      `INSERT INTO domains (project_id, name, verified_at, created_at) VALUES ($1, 'twice.test', $2, $2) RETURNING id`, [projectId, createdAt])).rows[0].id as string;
    const newer = await insert(a.id, '2026-10-02T00:00:00Z');
    const older = await insert(b.id, '2026-10-01T00:00:00Z');

    await runMigrations(url);

    const { rows } = await client.query(`SELECT id FROM domains WHERE name = 'twice.test' AND ownership_proven_at IS NOT NULL`);
    expect(rows.map((r) => r.id)).toEqual([older]);
    expect(newer).not.toBe(older);
  } finally {
    await client.end();
  }
});
