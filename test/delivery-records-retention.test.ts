// Retention of delivery records (issue 13, item 8): the real Worker's hourly
// scheduled handler deletes webhook deliveries (with their attempts) and
// outbound email attempts older than `delivery_records_retention_days`, in
// bounded batches; what is still being retried, and anything when the setting
// is 0, is kept. Read back through the API a tenant uses.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { useTenantStack } from './support/tenant-stack.js';
import { seedProject, startTestStack, platformToken, type TestStack } from './support/stack.js';

const env = useTenantStack({ keys: { reader: ['webhooks:read', 'emails:read'] } });

/**
 * Runs the hourly cron and answers once it has finished, its `waitUntil` work
 * included (Miniflare's trigger endpoint waits for the scheduled event's outcome).
 */
const runHourlyCron = async (s: TestStack) => s.runCron('17 * * * *');

/** A webhook of `projectId`, written directly (delivery is not under test here). */
async function webhook(s: TestStack, projectId: string): Promise<string> {
  const { rows: [row] } = await s.sql.query(
    `INSERT INTO webhooks (project_id, url, events, secret_sealed) VALUES ($1, 'https://hooks.example.test/in', '{*}', 'sealed') RETURNING id`, [projectId]);
  return row.id;
}

/** A delivery of `webhookId` created `ageDays` ago, finished then unless pending, with `attempts` attempt rows. */
async function delivery(s: TestStack, projectId: string, webhookId: string, status: 'pending' | 'succeeded' | 'failed', ageDays: number, attempts = 2): Promise<string> {
  const { rows: [row] } = await s.sql.query(
    `INSERT INTO webhook_deliveries (webhook_id, project_id, event, event_at, data, status, attempts, next_attempt_at, created_at, completed_at)
     VALUES ($1, $2, 'email.sent', now() - make_interval(days => $3::int), '{}', $4::text::webhook_delivery_status, $5,
       CASE WHEN $4::text = 'pending' THEN now() + interval '1 hour' END,
       now() - make_interval(days => $3::int), CASE WHEN $4::text <> 'pending' THEN now() - make_interval(days => $3::int) END)
     RETURNING id`, [webhookId, projectId, ageDays, status, attempts]);
  await s.sql.query(
    `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code)
     SELECT $1, n, now() - make_interval(days => $2), 120, 500 FROM generate_series(1, $3) n`, [row.id, ageDays, attempts]);
  return row.id;
}

/** One recipient's email in `status`, with `attempts` attempt rows started `ageDays` ago. */
async function email(s: TestStack, projectId: string, status: string, ageDays: number, attempts = 1): Promise<string> {
  const { rows: [message] } = await s.sql.query(
    `INSERT INTO outbound_messages (project_id, message_id, "from", subject, created_at)
     VALUES ($1, '<m@acme.test>', 'a@acme.test', 'hi', now() - make_interval(days => $2)) RETURNING id`, [projectId, ageDays]);
  const { rows: [row] } = await s.sql.query(
    `INSERT INTO emails (project_id, message_id, recipient, kind, status, attempts, next_attempt_at, created_at)
     VALUES ($1, $2, 'bob@example.org', 'to', $3::text::email_status, $4, CASE WHEN $3::text IN ('queued', 'sending') THEN now() END, now() - make_interval(days => $5::int))
     RETURNING id`, [projectId, message.id, status, attempts, ageDays]);
  await s.sql.query(
    `INSERT INTO email_attempts (email_id, attempt, outcome, smtp_code, reply, server, started_at, duration_ms)
     SELECT $1, n, 'deferred', 451, '451 4.7.1 try later', 'mx.example.org:25', now() - make_interval(days => $2), 300 FROM generate_series(1, $3) n`,
    [row.id, ageDays, attempts]);
  return row.id;
}

const count = async (s: TestStack, table: string) => Number((await s.sql.query(`SELECT count(*) FROM ${table}`)).rows[0].count);

describe('delivery_records_retention_days (default 30)', () => {
  test('the hourly cron deletes finished webhook deliveries and their attempts past 30 days, and keeps the rest', async () => {
    const { stack, tenant } = env;
    const hook = await webhook(stack, tenant.project.id);
    const oldSucceeded = await delivery(stack, tenant.project.id, hook, 'succeeded', 31);
    const oldFailed = await delivery(stack, tenant.project.id, hook, 'failed', 45, 8);
    const recent = await delivery(stack, tenant.project.id, hook, 'succeeded', 29);
    // Still being retried: never deleted, however old, nor its attempts.
    const stillPending = await delivery(stack, tenant.project.id, hook, 'pending', 40, 3);
    const listed = async () => {
      const r = await stack.call('GET', `/api/v1/webhooks/${hook}/deliveries?limit=100`, { token: env.keys.reader });
      expect(r.status).toBe(200);
      return new Map<string, number>(r.body.deliveries.map((d: { id: string; attempt_log: unknown[] }) => [d.id, d.attempt_log.length]));
    };
    expect([...(await listed()).keys()].sort()).toEqual([oldSucceeded, oldFailed, recent, stillPending].sort());

    expect(await runHourlyCron(stack)).toBe(200);
    expect(await listed()).toEqual(new Map([[recent, 2], [stillPending, 3]]));
    const { rows } = await stack.sql.query('SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = ANY($1)', [[oldSucceeded, oldFailed]]);
    expect(rows[0].n).toBe(0);
  });

  test('the hourly cron deletes attempts of finished emails started past 30 days; the email stays, a queued one keeps its history', async () => {
    const { stack, tenant } = env;
    const oldSent = await email(stack, tenant.project.id, 'sent', 31, 3);
    const oldFailed = await email(stack, tenant.project.id, 'failed', 60, 2);
    const recentSent = await email(stack, tenant.project.id, 'sent', 29, 1);
    // Deferred attempts set its backoff: a recipient still queued keeps them all.
    const stillQueued = await email(stack, tenant.project.id, 'queued', 35, 4);
    const attemptsOf = async (id: string) => {
      const r = await stack.call('GET', `/api/v1/emails/${id}`, { token: env.keys.reader });
      expect(r.status).toBe(200);
      return r.body.email.delivery_attempts.length;
    };
    expect(await attemptsOf(oldSent)).toBe(3);

    expect(await runHourlyCron(stack)).toBe(200);
    expect(await attemptsOf(oldSent)).toBe(0);
    expect(await attemptsOf(oldFailed)).toBe(0);
    expect(await attemptsOf(recentSent)).toBe(1);
    expect(await attemptsOf(stillQueued)).toBe(4);
  });

  test('more than one batch (5,000 rows) of old attempts is deleted in one run', async () => {
    const { stack, tenant } = env;
    const many = await email(stack, tenant.project.id, 'failed', 90, 5_001);
    const before = await count(stack, 'email_attempts');
    expect(await runHourlyCron(stack)).toBe(200);
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM email_attempts WHERE email_id = $1', [many])).rows[0].n).toBe(0);
    expect(await count(stack, 'email_attempts')).toBe(before - 5_001);
  });
});

describe('delivery_records_retention_days = 0', () => {
  let keeping: TestStack;
  beforeAll(async () => {
    keeping = await startTestStack({ settings: { SERVICE_DELIVERY_RECORDS_RETENTION_DAYS: '0' } });
  });
  afterAll(async () => { await keeping?.stop(); });

  test('keeps every record, however old', async () => {
    const project = await seedProject(keeping, await platformToken(keeping), 'keeper');
    const hook = await webhook(keeping, project.project.id);
    await delivery(keeping, project.project.id, hook, 'succeeded', 3650);
    await email(keeping, project.project.id, 'sent', 3650, 2);
    expect(await runHourlyCron(keeping)).toBe(200);
    expect(await count(keeping, 'webhook_deliveries')).toBe(1);
    expect(await count(keeping, 'webhook_attempts')).toBe(2);
    expect(await count(keeping, 'email_attempts')).toBe(2);
  });
});
