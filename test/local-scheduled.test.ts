// The local stack's cron trigger (edge/src/index.ts, localScheduledTrigger):
// it runs every job of a cron for the local runner and the tests, and nobody
// else on loopback can use it — a wrong or missing secret, another method, or a
// Worker started without the secret (as in production) gets 404 and runs nothing.
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { startEdgeWorker, type EdgeWorker } from '../edge/local/edge-worker.js';
import { LOCAL_SCHEDULED_HEADER, LOCAL_SCHEDULED_PATH } from '../edge/src/local-scheduled.js';
import { startTestStack, type TestStack } from './support/stack.js';

let stack: TestStack;
let plain: EdgeWorker;

beforeAll(async () => {
  stack = await startTestStack();
  // A second Worker on the same database without the trigger's secret, as `wrangler deploy` runs it.
  plain = await startEdgeWorker({
    vars: { SERVICE_DATABASE_URL: stack.databaseUrl, SERVICE_DATABASE_CRYPTO_ENCRYPTION_KEY: stack.encryptionKey, LOCAL_NEON_BRIDGE: inject('bridgeUrl') },
    persistTo: false, logLevel: 'error',
  });
}, 120_000);

afterAll(async () => {
  await plain?.stop();
  await stack?.stop();
});

/** Outbox rows the sweep has handed over: the trigger's visible effect. */
async function handedOver(): Promise<number> {
  return Number((await stack.sql.query('SELECT count(*) FROM outbox WHERE handed_over_at IS NOT NULL')).rows[0].count);
}

/** A row an isolate never handed over, older than the sweep's grace: the every-minute cron hands it over. */
async function pendingOutboxRow(): Promise<void> {
  const { rows: [project] } = await stack.sql.query(`INSERT INTO projects (name) VALUES ('cron') RETURNING id`);
  await stack.sql.query(
    `INSERT INTO outbox (project_id, event, data, created_at) VALUES ($1, 'inbound.received', $2, now() - interval '10 seconds')`,
    [project.id, JSON.stringify({ id: crypto.randomUUID(), sender: 'stranded@example.com' })],
  );
}

test('a wrong or missing secret, or a GET, is 404 and runs nothing', async () => {
  const url = `${stack.url}${LOCAL_SCHEDULED_PATH}?cron=${encodeURIComponent('* * * * *')}`;
  await pendingOutboxRow();
  const before = await handedOver();
  for (const init of [
    { method: 'POST' },
    { method: 'POST', headers: { [LOCAL_SCHEDULED_HEADER]: 'guess' } },
    { method: 'POST', headers: { [LOCAL_SCHEDULED_HEADER]: '' } },
    { method: 'GET' },
  ]) {
    const res = await fetch(url, init);
    expect(res.status).toBe(404);
    await res.arrayBuffer();
  }
  expect(await handedOver()).toBe(before);
});

test('a Worker started without the secret (production) has no trigger', async () => {
  const res = await fetch(`${plain.url}${LOCAL_SCHEDULED_PATH}?cron=${encodeURIComponent('* * * * *')}`, {
    method: 'POST', headers: { [LOCAL_SCHEDULED_HEADER]: 'anything' },
  });
  expect(res.status).toBe(404);
  await expect(plain.scheduled('* * * * *')).rejects.toThrow(/testScheduled/);
});

test('with the secret, the cron runs and answers once its jobs settled', async () => {
  const before = await handedOver();
  expect(await stack.runCron('* * * * *')).toBe(200);
  // The row the refused requests left alone (first test), handed over by the time the answer came.
  expect(await handedOver()).toBe(before + 1);
  expect(await stack.runCron('17 * * * *')).toBe(200);
});
