// A test file's own stack: a fresh database cloned from the migrated template
// and a Worker on workerd pointing at it, plus helpers to call the API.
import { inject } from 'vitest';
import pg from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import * as schema from '@edgemail/schema';
import { pgUrl } from '../../edge/local/pg-credentials.js';
import { startEdgeWorker, type WorkerLog } from '../../edge/local/edge-worker.js';
import { ENCRYPTION_KEY_ENV, newEncryptionKey } from '../../edge/local/encryption-key.js';
import { createPlatformCredential } from '../../edge/src/services/platform-credentials/create.js';
import { sessionCookieName } from '../../edge/src/services/console/sessions.js';

const TEMPLATE_DATABASE = 'edgemail_template';
/** `server.public_url` when a test sets none (wrangler.toml `[vars]`). */
const DEFAULT_PUBLIC_URL = 'https://mail.example.com';

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Sent as-is instead of JSON-encoding `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface TestStack {
  url: string;
  databaseUrl: string;
  /** The Worker's `database.crypto.encryption_key` (a second Worker on the same database needs it too). */
  encryptionKey: string;
  /** Direct database access for setting up and checking state. */
  sql: pg.Pool;
  db: ReturnType<typeof drizzle<typeof schema>>;
  /** The session cookie's name here: `__Host-edgemail_session`, or `edgemail_session` on loopback http. */
  sessionCookieName: string;
  call<T = any>(method: string, path: string, opts?: CallOptions): Promise<Reply<T>>;
  /** The Worker's console output so far, in order (start the stack with `captureLogs`). */
  logs(): WorkerLog[];
  /**
   * Stops the Worker and starts it again on the same database and settings,
   * as a restart of the runtime would (start the stack with `persistTo` to keep
   * Durable Object storage and alarms across it). `url` changes.
   */
  restart(): Promise<void>;
  /** Runs one of wrangler.toml's crons (`* * * * *`, `17 * * * *`) now; its status once every job settled (200, or 500). */
  runCron(cron: string): Promise<number>;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Worker settings (`SERVICE_*`), over the test defaults. */
  settings?: Record<string, string>;
  /** Keep the Worker's console output for `logs()`. */
  captureLogs?: boolean;
  /** A directory keeping Durable Object and R2 state across `restart()`; in memory otherwise. */
  persistTo?: string;
  /** A Neon bridge of the test's own (one it stops to take the database away), instead of the run's shared one. */
  bridgeUrl?: string;
  /**
   * The Worker's port (a free one otherwise): known before the start, so `server.public_url` can
   * name it (browser tests: passkeys and single sign-on need the page's origin to be the public URL).
   */
  port?: number;
}

/**
 * A fresh migrated database (cloned from the template) and its URL as the
 * application role: what a stack runs on, or a test of the database alone
 * (the operator binary with no Worker running).
 */
export async function createTestDatabase(): Promise<string> {
  const pgPort = inject('pgPort');
  const database = `t_${crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`;
  // The Worker and the file's own queries use the application role; the
  // superuser only creates the database, owned by that role.
  const app = inject('pgApp');
  const admin = new pg.Client({ connectionString: pgUrl(inject('pgAdmin'), pgPort, 'postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database} OWNER ${admin.escapeIdentifier(app.user)} TEMPLATE ${TEMPLATE_DATABASE}`);
  await admin.end();
  return pgUrl(app, pgPort, database);
}

export async function startTestStack(opts: StackOptions = {}): Promise<TestStack> {
  const databaseUrl = await createTestDatabase();

  const logs: WorkerLog[] = [];
  const encryptionKey = opts.settings?.[ENCRYPTION_KEY_ENV] ?? newEncryptionKey();
  const startWorker = () => startEdgeWorker({
    // The limiter runs in every test, set high enough that only the rate-limit tests reach it.
    // A key of the file's own, unless the test sets (or unsets) the setting itself.
    vars: { SERVICE_DATABASE_URL: databaseUrl, SERVICE_RATELIMIT_API_PER_MINUTE: '100000', [ENCRYPTION_KEY_ENV]: encryptionKey, ...opts.settings, LOCAL_NEON_BRIDGE: opts.bridgeUrl ?? inject('bridgeUrl') },
    persistTo: opts.persistTo ?? false,
    ...(opts.port ? { port: opts.port } : {}),
    testScheduled: true,
    logLevel: 'error',
    onLog: opts.captureLogs ? (entry) => logs.push(entry) : undefined,
  });
  let worker = await startWorker();
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 4 });

  async function call<T>(method: string, path: string, o: CallOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    let body: string | undefined = o.rawBody;
    if (body === undefined && o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(`${worker.url}${path}`, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    let parsed: unknown = text;
    try { parsed = text ? JSON.parse(text) : null; } catch { /* not JSON: keep the text */ }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  return {
    get url() { return worker.url; },
    databaseUrl, encryptionKey, sql, db: drizzle(sql, { schema }), call,
    sessionCookieName: sessionCookieName({ 'server.public_url': opts.settings?.SERVICE_SERVER_PUBLIC_URL ?? DEFAULT_PUBLIC_URL }),
    logs() {
      // An empty list would pass any "nothing was logged" assertion.
      if (!opts.captureLogs) throw new Error('start the stack with { captureLogs: true } to read its logs');
      return [...logs];
    },
    async restart() {
      await worker.stop();
      worker = await startWorker();
    },
    runCron: (cron) => worker.scheduled(cron),
    async stop() {
      await worker.stop();
      await sql.end();
    },
  };
}

/** Mints a platform credential straight in the database, as `edgemail admin create-credential` does. */
export async function platformToken(stack: TestStack, input: { name?: string; allowed_ips?: string[] } = {}): Promise<string> {
  const { token } = await createPlatformCredential(stack.db, { name: input.name ?? 'ops', allowed_ips: input.allowed_ips });
  return token;
}

export type SeededProject = Awaited<ReturnType<typeof seedProject>>;

/** A project with an owner, and a key holding `permissions` in it. */
export async function seedProject(stack: TestStack, admin: string, name = 'acme') {
  const { body: { user } } = await stack.call('POST', '/api/v1/admin/users', { token: admin, body: { email: `${name}-${crypto.randomUUID().slice(0, 8)}@example.com` } });
  const { body: { project } } = await stack.call('POST', '/api/v1/admin/projects', { token: admin, body: { name, owner_id: user.id } });
  const key = async (permissions: string[], extra: Record<string, unknown> = {}) => {
    const reply = await stack.call('POST', '/api/v1/api-keys', {
      token: admin, headers: { 'X-Service-Project-Id': project.id }, body: { name: `key-${permissions.join(',') || 'none'}`, permissions, ...extra },
    });
    if (reply.status !== 201) throw new Error(`key creation failed: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body as { api_key: { id: string; key_prefix: string }; token: string };
  };
  return { user, project, key };
}

/** A browser session for a user, created directly, as if signed in by `method` (the ceremonies have tests of their own). */
export async function sessionCookie(stack: TestStack, userId: string, method: 'password' | 'passkey' | 'oidc' = 'password', identityProviderId: string | null = null): Promise<string> {
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
  const hash = (await import('node:crypto')).createHash('sha256').update(token).digest('hex');
  await stack.sql.query(`INSERT INTO sessions (user_id, token_hash, expires_at, method, identity_provider_id) VALUES ($1, $2, now() + interval '1 day', $3, $4)`, [userId, hash, method, identityProviderId]);
  return `${stack.sessionCookieName}=${token}`;
}
