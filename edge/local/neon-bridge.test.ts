// Drives the bridge with the real @neondatabase/serverless driver, configured
// as the Worker configures it locally, against a real PostgreSQL server.
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { neon, neonConfig, NeonDbError, Pool } from '@neondatabase/serverless';
import { drizzle } from 'drizzle-orm/neon-http';
import { eq } from 'drizzle-orm';
import { pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { startPostgres, type LocalPostgres } from './postgres.js';
import { startNeonBridge, type NeonBridge } from './neon-bridge.js';
import { pgUrl } from './pg-credentials.js';
import { freePort } from './free-port.js';

const dataDir = fileURLToPath(new URL(`../../.data/test-bridge-${randomBytes(4).toString('hex')}`, import.meta.url));
const database = 'bridge_test';
let server: LocalPostgres;
let bridge: NeonBridge;
let url: string;
const logs: string[] = [];


beforeAll(async () => {
  server = await startPostgres({ dataDir: `${dataDir}/pg`, port: await freePort() });
  await server.createDatabase(database);
  url = server.url(database);
  bridge = await startNeonBridge({ pgHost: '127.0.0.1', pgPort: server.port, log: (l) => logs.push(l) });

  neonConfig.fetchEndpoint = () => `${bridge.url}/sql`;
  neonConfig.webSocketConstructor = WebSocket;
  neonConfig.wsProxy = (host, port) => `127.0.0.1:${bridge.port}/v1?address=${host}:${port}`;
  neonConfig.useSecureWebSocket = false;
  neonConfig.pipelineTLS = false;
  neonConfig.pipelineConnect = false;

  await neon(url)`CREATE TABLE accounts (id int PRIMARY KEY, name text NOT NULL UNIQUE)`;
}, 120_000);

afterAll(async () => {
  await bridge?.close();
  await server?.stop();
  if (server) rmSync(server.dataDir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

async function accountIds(): Promise<number[]> {
  const rows = await neon(url)`SELECT id FROM accounts ORDER BY id`;
  return rows.map((r) => r.id as number);
}

describe('SQL over HTTP', () => {
  it('round-trips parameters to the right JS types', async () => {
    const sql = neon(url);
    const when = new Date('2024-02-29T12:34:56.789Z');
    const uuid = randomUUID();
    const [row] = await sql`SELECT
      ${42}::int AS i, ${'9007199254740993'}::bigint AS big, ${'héllo ✉'}::text AS t,
      ${true}::boolean AS yes, ${false}::boolean AS no, ${when}::timestamptz AS ts,
      ${{ a: 1, b: [1, 'x', null] }}::jsonb AS j, ${['a', 'b,c', '"q"', null]}::text[] AS arr,
      ${uuid}::uuid AS u, ${null}::text AS n, ${'1.50'}::numeric AS num, ${Buffer.from([0, 1, 255])}::bytea AS bin`;
    expect(row).toBeDefined();
    expect(row!.i).toBe(42);
    expect(row!.big).toBe('9007199254740993'); // int8 stays a string: no precision loss
    expect(row!.t).toBe('héllo ✉');
    expect(row!.yes).toBe(true);
    expect(row!.no).toBe(false);
    expect(row!.ts).toBeInstanceOf(Date);
    expect((row!.ts as Date).toISOString()).toBe(when.toISOString());
    expect(row!.j).toEqual({ a: 1, b: [1, 'x', null] });
    expect(row!.arr).toEqual(['a', 'b,c', '"q"', null]);
    expect(row!.u).toBe(uuid);
    expect(row!.n).toBeNull();
    expect(row!.num).toBe('1.50');
    expect([...(row!.bin as Uint8Array)]).toEqual([0, 1, 255]);
  });

  it('supports array mode, full results and per-query options', async () => {
    const sql = neon(url, { arrayMode: true, fullResults: true });
    const res = await sql`SELECT 1 AS a, 'x' AS b UNION ALL SELECT 2, NULL`;
    expect(res.rows).toEqual([[1, 'x'], [2, null]]);
    expect(res.fields.map((f) => [f.name, f.dataTypeID])).toEqual([['a', 23], ['b', 25]]);
    expect(res.command).toBe('SELECT');
    expect(res.rowCount).toBe(2);

    expect(await sql.query('SELECT $1::int AS n', [7], { arrayMode: false, fullResults: false })).toEqual([{ n: 7 }]);
    const empty = await neon(url).query('SELECT id FROM accounts WHERE false', [], { fullResults: true });
    expect(empty.rows).toEqual([]);
    expect(empty.fields.map((f) => f.name)).toEqual(['id']);
  });

  it('commits a batch transaction', async () => {
    const sql = neon(url);
    const results = await sql.transaction((tx) => [
      tx`INSERT INTO accounts VALUES (1, 'ann'), (2, 'bob')`,
      tx`SELECT count(*)::int AS n FROM accounts`,
    ], { fullResults: true });
    expect(results[0]!.command).toBe('INSERT');
    expect(results[0]!.rowCount).toBe(2);
    expect(results[1]!.rows).toEqual([{ n: 2 }]);
    expect(await accountIds()).toEqual([1, 2]);
  });

  it('rolls back the whole batch when one statement fails', async () => {
    const sql = neon(url);
    const batch = sql.transaction([sql`INSERT INTO accounts VALUES (3, 'cat')`, sql`INSERT INTO accounts VALUES (1, 'dup')`]);
    await expect(batch).rejects.toMatchObject({ name: 'NeonDbError', code: '23505' });
    expect(await accountIds()).toEqual([1, 2]);
  });

  it('applies the batch isolation, read-only and deferrable options', async () => {
    const sql = neon(url);
    const [res] = await sql.transaction(
      (tx) => [tx`SELECT current_setting('transaction_isolation') AS iso, current_setting('transaction_read_only') AS ro, current_setting('transaction_deferrable') AS d`],
      { isolationLevel: 'Serializable', readOnly: true, deferrable: true },
    );
    expect(res).toEqual([{ iso: 'serializable', ro: 'on', d: 'on' }]);
    const write = sql.transaction([sql`INSERT INTO accounts VALUES (9, 'ro')`], { readOnly: true });
    await expect(write).rejects.toMatchObject({ code: '25006' });
  });

  it('surfaces a unique violation as NeonDbError 23505 with its details', async () => {
    const err = await neon(url)`INSERT INTO accounts VALUES (5, 'ann')`.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NeonDbError);
    expect(err).toMatchObject({ code: '23505', constraint: 'accounts_name_key', table: 'accounts', severity: 'ERROR' });
    expect((err as NeonDbError).detail).toBe('Key (name)=(ann) already exists.');
  });

  it('surfaces syntax errors, multi-statement queries and unknown databases as errors', async () => {
    await expect(neon(url).query('SELEC 1')).rejects.toMatchObject({ code: '42601', position: '1' });
    // Like Neon, each query is one prepared statement.
    await expect(neon(url).query('SELECT 1; SELECT 2')).rejects.toMatchObject({ code: '42601' });
    await expect(neon(server.url('no_such_db'))`SELECT 1`).rejects.toMatchObject({ code: '3D000' });
    // The pooled connections are still usable afterwards.
    expect(await neon(url)`SELECT 1 AS ok`).toEqual([{ ok: 1 }]);
  });

  it('does not leak a lone BEGIN into the next request on a pooled connection', async () => {
    const sql = neon(url);
    await sql`BEGIN`;
    await sql`INSERT INTO accounts VALUES (7, 'eve')`;
    // Another session (the WebSocket path) sees the row only if that INSERT autocommitted.
    const pool = new Pool({ connectionString: url });
    try {
      expect((await pool.query('SELECT name FROM accounts WHERE id = 7')).rows).toEqual([{ name: 'eve' }]);
    } finally {
      await pool.end();
    }
    await sql`DELETE FROM accounts WHERE id = 7`;
  });

  it('runs 50 concurrent queries', async () => {
    const sql = neon(url);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => sql`SELECT ${i}::int AS i, pg_sleep(0.02)::text AS s`));
    expect(results.map((rows) => rows[0]?.i)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });
});

describe('WebSocket to TCP', () => {
  it('runs interactive transactions through Pool', async () => {
    await neon(url)`CREATE TABLE events (id int PRIMARY KEY, note text)`;
    const pool = new Pool({ connectionString: url });
    try {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO events VALUES ($1, $2)', [1, 'dropped']);
        expect((await client.query('SELECT count(*)::int AS n FROM events')).rows).toEqual([{ n: 1 }]);
        await client.query('ROLLBACK');

        await client.query('BEGIN');
        await client.query('INSERT INTO events VALUES ($1, $2)', [2, 'kept']);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      expect(await neon(url)`SELECT id, note FROM events`).toEqual([{ id: 2, note: 'kept' }]);

      await expect(pool.query('INSERT INTO events VALUES (2, $1)', ['dup'])).rejects.toMatchObject({ code: '23505' });
      const many = await Promise.all(Array.from({ length: 20 }, (_, i) => pool.query('SELECT $1::int AS i', [i])));
      expect(many.map((r) => r.rows[0].i)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    } finally {
      await pool.end();
    }
  });

  it('refuses /v1 addresses other than the configured server', async () => {
    const other = pgUrl(server.credentials.app, server.port + 1, database);
    const pool = new Pool({ connectionString: other, connectionTimeoutMillis: 5_000 });
    pool.on('error', () => {});
    await expect(pool.query('SELECT 1')).rejects.toThrow();
    await pool.end().catch(() => {});

    const status = (address: string) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${bridge.port}/v1?address=${address}`);
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => reject(new Error(`bridge accepted ${address}`)));
        ws.on('error', () => {});
      });
    expect(await status('example.com:5432')).toBe(403);
    expect(await status(`127.0.0.1:${server.port + 1}`)).toBe(403);
    expect(await status('')).toBe(403);
    expect(logs.some((l) => l.includes('refused WebSocket to example.com:5432'))).toBe(true);

    const health = await fetch(`${bridge.url}/health`);
    expect([health.status, await health.text()]).toEqual([200, 'ok']);
  });
});

interface RawReply { status: number; body: string }

/**
 * One request to the bridge with exactly these headers (Host included), as a
 * browser page or a DNS-rebinding attacker would send it; an answered upgrade
 * counts as status 101.
 */
function raw(path: string, headers: Record<string, string>, body?: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: bridge.port, path, method: body === undefined ? 'GET' : 'POST', headers, setHost: false, agent: false });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('only local programs reach the bridge', () => {
  const local = () => `127.0.0.1:${bridge.port}`;
  const upgrade = () => ({
    connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64'),
  });
  const v1 = () => `/v1?address=127.0.0.1:${server.port}`;
  /** What the driver posts to /sql, here an INSERT that must not happen. */
  const intrusion = (note: string) => ({
    headers: { 'content-type': 'application/json', 'neon-connection-string': url, 'neon-array-mode': 'true', 'neon-raw-text-output': 'true' },
    body: JSON.stringify({ query: 'INSERT INTO intrusions VALUES ($1)', params: [note] }),
  });
  const intrusions = async () => (await neon(url)`SELECT note FROM intrusions ORDER BY note`).map((r) => r.note as string);

  beforeAll(async () => { await neon(url)`CREATE TABLE intrusions (note text)`; });

  it('serves requests shaped like the Worker\'s: no Origin, a loopback Host with the bridge\'s port', async () => {
    // workerd's fetch and WebSocket send Host 127.0.0.1:<port> and no Origin.
    for (const host of [local(), `localhost:${bridge.port}`, `[::1]:${bridge.port}`, `LOCALHOST:${bridge.port}`]) {
      const { headers, body } = intrusion(`allowed via ${host}`);
      expect(await raw('/sql', { ...headers, host }, body), host).toMatchObject({ status: 200 });
      expect((await raw(v1(), { ...upgrade(), host })).status, host).toBe(101);
    }
    await neon(url)`DELETE FROM intrusions`;
  });

  it('refuses /sql with any Origin, running nothing, and logs it', async () => {
    for (const origin of ['https://evil.example', 'null', `http://${local()}`]) {
      const { headers, body } = intrusion(origin);
      expect(await raw('/sql', { ...headers, host: local(), origin }, body)).toEqual({ status: 403, body: 'forbidden' });
    }
    expect(await intrusions()).toEqual([]);
    expect(logs).toContain('neon-bridge: refused request POST /sql: foreign Origin https://evil.example');
  });

  it('refuses a WebSocket upgrade with any Origin, and logs it', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://${local()}${v1()}`, { origin: 'https://evil.example' });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => reject(new Error('bridge accepted a WebSocket from a web page')));
      ws.on('error', () => {});
    });
    expect(status).toBe(403);
    expect((await raw(v1(), { ...upgrade(), host: local(), origin: 'null' })).status).toBe(403);
    expect(logs).toContain(`neon-bridge: refused WebSocket GET ${v1()}: foreign Origin https://evil.example`);
  });

  it('refuses a foreign Host (DNS rebinding) on /sql, the upgrade and /health', async () => {
    const foreign = [`evil.example:${bridge.port}`, `127.0.0.1.evil.example:${bridge.port}`, `127.0.0.1:${bridge.port + 1}`, 'localhost', `localhost.:${bridge.port}`];
    for (const host of foreign) {
      const { headers, body } = intrusion(host);
      expect((await raw('/sql', { ...headers, host }, body)).status, host).toBe(403);
      expect((await raw(v1(), { ...upgrade(), host })).status, host).toBe(403);
      expect((await raw('/health', { host })).status, host).toBe(403);
    }
    expect(await intrusions()).toEqual([]);
    expect(logs).toContain(`neon-bridge: refused request POST /sql: foreign Host evil.example:${bridge.port}`);
    expect(logs).toContain(`neon-bridge: refused WebSocket GET ${v1()}: foreign Host evil.example:${bridge.port}`);
  });

  it('gives the application role no way to the server\'s programs or files', async () => {
    const marker = `/tmp/edgemail-bridge-test-${randomBytes(4).toString('hex')}`;
    const copy = `COPY (SELECT 1) TO PROGRAM 'touch ${marker}'`;
    // Over HTTP and over the WebSocket: both log in as the application role.
    await expect(neon(url).query(copy)).rejects.toMatchObject({ code: '42501' });
    const pool = new Pool({ connectionString: url });
    try {
      await expect(pool.query(copy)).rejects.toMatchObject({ code: '42501' });
      await expect(pool.query(`SELECT pg_read_file('/etc/passwd')`)).rejects.toMatchObject({ code: '42501' });
      const { rows } = await pool.query(`SELECT current_user AS who, rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user`);
      expect(rows).toEqual([{ who: 'edgemail', rolsuper: false, rolcreatedb: false, rolcreaterole: false }]);
    } finally {
      await pool.end();
    }
    expect(existsSync(marker)).toBe(false);
    // The fixed login of older versions is gone.
    const old = pgUrl({ user: 'postgres', password: 'postgres' }, server.port, database);
    await expect(neon(old)`SELECT 1`).rejects.toMatchObject({ code: '28P01' });
  });
});

// Last on purpose: drizzle's neon-http driver globally makes the driver return
// timestamp/date columns as strings, which would change the type test above.
describe('drizzle-orm/neon-http', () => {
  const notes = pgTable('notes', {
    id: serial('id').primaryKey(),
    body: text('body').notNull().unique(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  });

  it('inserts and selects', async () => {
    await neon(url)`CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL UNIQUE, created_at timestamptz NOT NULL DEFAULT now())`;
    const db = drizzle({ client: neon(url) });
    const [first] = await db.insert(notes).values({ body: 'hello' }).returning();
    expect(first).toMatchObject({ id: 1, body: 'hello' });
    expect(first!.createdAt).toBeInstanceOf(Date);

    await db.batch([db.insert(notes).values({ body: 'second' }), db.insert(notes).values({ body: 'third' })]);
    expect(await db.select({ id: notes.id, body: notes.body }).from(notes).orderBy(notes.id)).toEqual([
      { id: 1, body: 'hello' }, { id: 2, body: 'second' }, { id: 3, body: 'third' },
    ]);
    expect(await db.select({ body: notes.body }).from(notes).where(eq(notes.id, 2))).toEqual([{ body: 'second' }]);

    // drizzle wraps driver errors: the SQLSTATE is on `cause`.
    const err = await db.insert(notes).values({ body: 'hello' }).catch((e: unknown) => e);
    expect((err as { cause?: unknown }).cause).toMatchObject({ name: 'NeonDbError', code: '23505' });
  });
});
