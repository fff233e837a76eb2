// Database transactions per request, read from pg_stat_database.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Stack } from '../../edge/local/stack.js';
import type { Target, TransactionCount } from './types.js';

/**
 * Database transactions per request, from pg_stat_database, over `n` requests
 * made `concurrency` at a time (1: one after another). Each Neon HTTP query
 * (and each batch) is one transaction, so this counts the Worker's round trips
 * to the database.
 *
 * Backends report their counters to the cumulative statistics lazily (up to
 * ~10 s after going idle) but always on exit, so the bridge's pooled
 * connections are terminated before each reading; the pool reconnects on the
 * next query, and as a new connection's start-up counts as one transaction,
 * new sessions are subtracted. The monitor connects to another database so its
 * own queries are not counted, and autovacuum (whose workers' transactions
 * would count) is off meanwhile.
 */
export async function countTransactions(stack: Stack, target: Target, n: number, concurrency = 1): Promise<TransactionCount> {
  const database = decodeURIComponent(new URL(stack.databaseUrl).pathname.slice(1));
  const monitor = new pg.Client({ connectionString: stack.postgres.adminUrl('postgres') });
  await monitor.connect();
  try {
    await monitor.query('ALTER SYSTEM SET autovacuum = off');
    await monitor.query('SELECT pg_reload_conf()');
    const reading = async () => {
      await sleep(300); // last-used writes run after the response (waitUntil)
      await monitor.query(
        `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
          WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
        [database],
      );
      await monitor.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await monitor.query<{ xacts: string; sessions: string }>(
        'SELECT xact_commit + xact_rollback AS xacts, sessions FROM pg_stat_database WHERE datname = $1',
        [database],
      );
      return { xacts: Number(rows[0]!.xacts), sessions: Number(rows[0]!.sessions) };
    };

    const before = await reading();
    let sent = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (sent < n) {
        const i = ++sent;
        const res = await fetch(`${target.baseUrl ?? stack.url}${target.path}`, { method: target.method, body: target.body, headers: target.headers });
        await res.arrayBuffer();
        const expected = target.expectStatus ?? (target.method === 'POST' ? 201 : 200);
        if (res.status !== expected) throw new Error(`${target.name}: request ${i} of ${n} answered ${res.status}`);
      }
    }));
    const after = await reading();
    const transactions = after.xacts - before.xacts;
    const sessions = after.sessions - before.sessions;
    return { requests: n, transactions, sessions, perRequest: (transactions - sessions) / n };
  } finally {
    await monitor.query('ALTER SYSTEM RESET autovacuum').catch(() => {});
    await monitor.query('SELECT pg_reload_conf()').catch(() => {});
    await monitor.end();
  }
}
