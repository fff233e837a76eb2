// Who may log in to the local server, and as what. Applied on every start, so a
// data directory from an older version (postgres/postgres, cleartext
// `password` auth, tables owned by the superuser) is brought up to date, and a
// lost credentials file is simply replaced.
import { chownSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import type { PgCredentials } from './pg-credentials.js';
import type { RunAs } from './pg-server.js';

/** Password logins only, with SCRAM (the password never crosses the socket). */
const PG_HBA = `# Written by edgemail (edge/local/pg-access.ts) on every start; edits are lost.
local all all scram-sha-256
host  all all 127.0.0.1/32 scram-sha-256
host  all all ::1/128 scram-sha-256
`;

export function writePgHba(dataDir: string, runAs: RunAs): void {
  const file = `${dataDir}/pg_hba.conf`;
  writeFileSync(file, PG_HBA, { mode: 0o600 });
  if (runAs.uid !== undefined) chownSync(file, runAs.uid, runAs.gid ?? -1);
}

/**
 * Statements for a single-user session (one per line): the superuser's
 * password, and the application role with no power beyond its own databases.
 * Without SUPERUSER and outside pg_execute_server_program it cannot run
 * `COPY … TO PROGRAM`, read server files or load libraries.
 */
export function roleStatements(c: PgCredentials): string[] {
  const { superuser, app } = c;
  return [
    `ALTER ROLE "${superuser.user}" WITH PASSWORD '${superuser.password}';`,
    `DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${app.user}') THEN CREATE ROLE "${app.user}"; END IF; END $$;`,
    `ALTER ROLE "${app.user}" WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '${app.password}';`,
    // In case someone granted them by hand: these let a role reach the server's programs and files.
    ...['pg_execute_server_program', 'pg_read_server_files', 'pg_write_server_files'].map(
      (r) => `DO $$ BEGIN IF pg_has_role('${app.user}', '${r}', 'MEMBER') THEN REVOKE ${r} FROM "${app.user}"; END IF; END $$;`,
    ),
  ];
}

/**
 * Creates `name` owned by the application role (as a copy of `template` if
 * given). An existing database is handed to that role, with everything in it
 * the superuser created (an older version ran migrations as `postgres`); done
 * on every call, so an interrupted hand-over completes next time.
 */
export async function ensureAppDatabase(adminUrl: (db: string) => string, c: PgCredentials, name: string, template?: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl('postgres') });
  await admin.connect();
  try {
    const found = await admin.query<{ owner: string }>(
      'SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1', [name]);
    const ident = (s: string) => admin.escapeIdentifier(s);
    if (found.rowCount === 0) {
      await admin.query(`CREATE DATABASE ${ident(name)} OWNER ${ident(c.app.user)}${template ? ` TEMPLATE ${ident(template)}` : ''}`);
      return;
    }
    if (found.rows[0]!.owner !== c.app.user) await admin.query(`ALTER DATABASE ${ident(name)} OWNER TO ${ident(c.app.user)}`);
  } finally {
    await admin.end();
  }
  const db = new pg.Client({ connectionString: adminUrl(name) });
  await db.connect();
  try {
    await db.query(handOver(c.superuser.user, c.app.user));
  } finally {
    await db.end();
  }
}

/** Gives `to` the schemas, tables, sequences, types and functions `from` owns outside the system schemas. */
function handOver(from: string, to: string): string {
  const user = (s: string) => s.replace(/'/g, "''");
  // Objects of an extension belong to it; they stay as they are.
  const own = (alias: string) => `NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = ${alias}.oid AND d.deptype = 'e')`;
  return `DO $$
DECLARE
  o regrole := '${user(from)}';
  r record;
BEGIN
  FOR r IN SELECT nspname FROM pg_namespace WHERE nspowner = o AND ${own('pg_namespace')} AND nspname NOT LIKE 'pg\\_%' AND nspname NOT IN ('information_schema', 'public') LOOP
    EXECUTE format('ALTER SCHEMA %I OWNER TO %I', r.nspname, '${user(to)}');
  END LOOP;
  -- Tables first: their serial sequences follow them and cannot be moved alone.
  FOR r IN SELECT c.oid::regclass AS rel FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relowner = o AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ${own('c')} AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' LOOP
    EXECUTE format('ALTER TABLE %s OWNER TO %I', r.rel, '${user(to)}');
  END LOOP;
  FOR r IN SELECT c.oid::regclass AS rel FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relowner = o AND c.relkind = 'S' AND ${own('c')} AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' LOOP
    EXECUTE format('ALTER SEQUENCE %s OWNER TO %I', r.rel, '${user(to)}');
  END LOOP;
  -- Enums, domains, ranges and free-standing composites; array types follow their element.
  FOR r IN SELECT t.oid::regtype AS typ FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
    LEFT JOIN pg_class c ON c.oid = t.typrelid
    WHERE t.typowner = o AND (t.typtype IN ('e', 'd', 'r') OR (t.typtype = 'c' AND c.relkind = 'c'))
      AND ${own('t')} AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' LOOP
    EXECUTE format('ALTER TYPE %s OWNER TO %I', r.typ, '${user(to)}');
  END LOOP;
  FOR r IN SELECT p.oid::regprocedure AS fn FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE p.proowner = o AND ${own('p')} AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' LOOP
    EXECUTE format('ALTER ROUTINE %s OWNER TO %I', r.fn, '${user(to)}');
  END LOOP;
END $$`;
}
