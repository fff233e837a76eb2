// `npx tsx bench/explain-retention.ts [--rows 100000]`: the query plans of the
// hourly purges and the per-minute inbound storage count (issue 31 §4) on
// tables of a realistic size, without and with the indexes of migration
// 0018_speed_ii_indexes. A throwaway PostgreSQL (the stack's own programs)
// gets every migration; the rows are written straight in (foreign keys off),
// spread over the retention window so a purge finds the old ~3% to delete,
// as an hourly run does. Each statement is EXPLAIN ANALYZEd as the code runs
// it (a delete inside a transaction rolled back), first with 0018's indexes
// dropped, then with them created again from the migration file.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runMigrations, migrationsFolder } from '@edgemail/schema/migrate';
import { startPostgres } from '../edge/local/postgres.js';
import { freePort } from '../edge/local/free-port.js';

const rowsFlag = process.argv.indexOf('--rows');
const ROWS = rowsFlag > 0 ? Number(process.argv[rowsFlag + 1]) : 100_000;
const MIGRATION = join(migrationsFolder, '0018_speed_ii_indexes.sql');
const INDEXES = ['inbound_emails_project_id_size_idx', 'outbox_handed_over_at_idx', 'webhook_deliveries_completed_at_idx', 'webhook_deliveries_redelivery_of_idx', 'email_attempts_started_at_idx'];

/** The statements as the code runs them (services/inbound-emails/usage-count.ts, delivery-records/purge.ts, webhook-outbox/sweep.ts), retention 30 days. */
const QUERIES: Record<string, string> = {
  'countInboundUsage (sum per project)': `select project_id, sum(size)::bigint as bytes from inbound_emails group by project_id`,
  'purge webhook deliveries (one batch)': `delete from webhook_deliveries where id in (
    select id from webhook_deliveries where status <> 'pending' and completed_at < now() - make_interval(days => 30) limit 5000)`,
  'purge email attempts (one batch)': `delete from email_attempts where id in (
    select a.id from email_attempts a join emails e on e.id = a.email_id
    where a.started_at < now() - make_interval(days => 30) and e.status not in ('queued', 'sending') limit 5000)`,
  'purge outbox': `delete from outbox where handed_over_at < now() - 7 * interval '1 day'`,
};

async function seed(c: pg.Client, n: number): Promise<void> {
  await c.query('SET session_replication_role = replica'); // no foreign keys: the parents are not what is measured
  await c.query(`insert into inbound_emails (project_id, spool_id, sender, recipients, subject, text_body, html_body, headers, auth, size, status, received_at)
    select ('00000000-0000-0000-0000-' || lpad((i % 50)::text, 12, '0'))::uuid, 'spool-' || i, 'a@example.org', '{b@example.net}', 'Subject ' || i,
      repeat('text body ', 150), repeat('<p>html body</p>', 150), '{"from":"a@example.org"}', '{}', 8000 + i % 4000, 'received',
      now() - (i % 43200) * interval '1 minute'
    from generate_series(1, ${n}) i`);
  await c.query(`insert into outbound_messages (id, project_id, message_id, "from", "to", subject)
    select ('10000000-0000-0000-0000-' || lpad(i::text, 12, '0'))::uuid, '00000000-0000-0000-0000-000000000001', '<m' || i || '@x>', 'a@example.org', '{b@example.net}', 's'
    from generate_series(1, ${n}) i`).catch((e) => { throw new Error(`outbound_messages: ${e.message}`); });
  await c.query(`insert into emails (id, project_id, message_id, recipient, kind, status, created_at)
    select ('20000000-0000-0000-0000-' || lpad(i::text, 12, '0'))::uuid, '00000000-0000-0000-0000-000000000001', ('10000000-0000-0000-0000-' || lpad(i::text, 12, '0'))::uuid,
      'b' || i || '@example.net', 'to', (case when i % 50 = 0 then 'queued' else 'sent' end)::email_status, now() - (i % 44640) * interval '1 minute'
    from generate_series(1, ${n}) i`);
  await c.query(`insert into email_attempts (email_id, attempt, outcome, smtp_code, reply, server, started_at, duration_ms)
    select ('20000000-0000-0000-0000-' || lpad(i::text, 12, '0'))::uuid, 1, 'sent', 250, '250 2.0.0 OK queued as ABC' || i, 'mx.example.net', now() - (i % 44640) * interval '1 minute', 120
    from generate_series(1, ${n}) i`);
  await c.query(`insert into webhook_deliveries (webhook_id, project_id, outbox_id, event, event_at, data, status, attempts, created_at, completed_at)
    select '30000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-000000000001', i, 'email.sent', now(), '{"email_id":"x","to":"b@example.net"}',
      (case when i % 100 = 0 then 'pending' else 'succeeded' end)::webhook_delivery_status, 1,
      now() - (i % 44640) * interval '1 minute', case when i % 100 = 0 then null else now() - (i % 44640) * interval '1 minute' end
    from generate_series(1, ${n}) i`);
  await c.query(`insert into outbox (project_id, event, data, created_at, handed_over_at, streamed_at)
    select '00000000-0000-0000-0000-000000000001', 'email.sent', '{"email_id":"x"}', now() - (i % 11520) * interval '1 minute',
      case when i % 1000 = 0 then null else now() - (i % 11520) * interval '1 minute' end, now()
    from generate_series(1, ${n}) i`);
  await c.query('SET session_replication_role = origin');
  await c.query('VACUUM ANALYZE inbound_emails, outbound_messages, emails, email_attempts, webhook_deliveries, outbox');
}

async function explainAll(c: pg.Client, label: string): Promise<void> {
  console.log(`\n### ${label}\n`);
  for (const [name, query] of Object.entries(QUERIES)) {
    await c.query('BEGIN');
    const { rows } = await c.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${query}`);
    await c.query('ROLLBACK');
    const plan = rows[0]['QUERY PLAN'][0];
    const nodes: string[] = [];
    const walk = (p: Record<string, unknown>) => {
      nodes.push(`${p['Node Type']}${p['Index Name'] ? ` using ${p['Index Name']}` : p['Relation Name'] ? ` on ${p['Relation Name']}` : ''}`);
      for (const child of (p.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk(plan.Plan);
    const buffers = Number(plan.Plan['Shared Hit Blocks'] ?? 0) + Number(plan.Plan['Shared Read Blocks'] ?? 0);
    console.log(`- ${name}: ${plan['Execution Time'].toFixed(1)} ms, ${buffers} buffers (8 kB pages) touched; ${nodes.filter((n) => /Scan|Join|Loop/.test(n)).join(' > ')}`);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'explain-retention-'));
const server = await startPostgres({ dataDir: join(dir, 'data'), port: await freePort() });
try {
  await server.createDatabase('explain');
  await runMigrations(server.url('explain'));
  const c = new pg.Client({ connectionString: server.adminUrl('explain') });
  await c.connect();
  try {
    console.log(`${ROWS} rows each in inbound_emails (50 projects), emails + email_attempts, webhook_deliveries, outbox; retention 30 days (7 for the outbox)`);
    await seed(c, ROWS);
    for (const name of INDEXES) await c.query(`DROP INDEX IF EXISTS ${name}`);
    await c.query('ANALYZE');
    await explainAll(c, 'without the indexes (before 0018)');
    for (const statement of readFileSync(MIGRATION, 'utf8').split('--> statement-breakpoint')) await c.query(statement);
    await c.query('VACUUM ANALYZE inbound_emails, email_attempts, webhook_deliveries, outbox');
    await explainAll(c, 'with 0018_speed_ii_indexes');
  } finally {
    await c.end();
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
