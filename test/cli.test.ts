// The operator binary as an operator runs it: `pnpm -s edgemail …` (or the
// command that script runs) as a child process against this file's database,
// with the Worker serving the same database.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from './support/stack.js';
import { freePort } from './support/global-setup.js';

const ROOT = new URL('../', import.meta.url).pathname;
const PLATFORM_TOKEN = /^mya_[a-z0-9]{8}_[A-Za-z0-9_-]{43}\n$/;
const PROJECT_TOKEN = /^myk_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/;

interface Run { code: number; stdout: string; stderr: string }

/**
 * Runs the binary from the checkout; resolves with the exit code and output
 * whatever the code. Inherited SERVICE_* variables are dropped so only `env`
 * configures it. Most runs start it as the `pnpm edgemail` script does (`node
 * --import tsx edge/cli/main.ts`), without pnpm's own start-up (~0.7 s each);
 * `viaPnpm` runs the script itself, as the README does.
 */
function edgemail(args: string[], env: Record<string, string> = {}, viaPnpm = false): Promise<Run> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_')));
  const [command, prefix] = viaPnpm ? ['pnpm', ['-s', 'edgemail']] : [process.execPath, ['--import', 'tsx', 'edge/cli/main.ts']];
  return new Promise((resolve) => {
    execFile(command, [...prefix, ...args], { cwd: ROOT, env: { ...base, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

let stack: TestStack;

/** Every table in the database, schema-qualified, sorted. */
async function tables(): Promise<string[]> {
  const { rows } = await stack.sql.query<{ t: string }>(
    `SELECT table_schema || '.' || table_name AS t FROM information_schema.tables
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`);
  return rows.map((r) => r.t);
}

async function credentialCount(): Promise<number> {
  const { rows } = await stack.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM platform_credentials');
  return rows[0]!.n;
}

/** Mints a platform credential with the binary; fails the test unless it printed a token. */
async function cliCredential(name: string, env: Record<string, string> = {}, args: string[] = ['--database-url', stack.databaseUrl], viaPnpm = false): Promise<string> {
  const run = await edgemail(['admin', 'create-credential', '--name', name, ...args], env, viaPnpm);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toMatch(PLATFORM_TOKEN);
  return run.stdout.trim();
}

beforeAll(async () => { stack = await startTestStack(); });
afterAll(async () => { await stack?.stop(); });

describe('edgemail migrate', () => {
  it('is idempotent on a migrated database: exits 0 twice, tables unchanged', async () => {
    const before = await tables();
    expect(before).toEqual(expect.arrayContaining(['public.platform_credentials', 'public.api_keys', 'public.projects']));
    const applied = async () => (await stack.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations')).rows[0]!.n;
    const appliedBefore = await applied();

    const first = await edgemail(['migrate', '--database-url', stack.databaseUrl]);
    expect(first.code, first.stderr).toBe(0);
    // The second run finds the database through SERVICE_DATABASE_URL.
    const second = await edgemail(['migrate'], { SERVICE_DATABASE_URL: stack.databaseUrl });
    expect(second.code, second.stderr).toBe(0);

    expect(await tables()).toEqual(before);
    expect(await applied()).toBe(appliedBefore);
  });
});

describe('edgemail admin create-credential', () => {
  let token: string;
  beforeAll(async () => { token = await cliCredential('ops'); });

  it('prints only the mya_ token on stdout', async () => {
    const run = await edgemail(['admin', 'create-credential', '--name', 'ops-2', '--database-url', stack.databaseUrl]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(PLATFORM_TOKEN);
  });

  it('the token works against the running Worker', async () => {
    const reply = await stack.call('GET', '/api/v1/admin/users', { token });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ users: expect.any(Array) });
  });

  it('the database holds only its sha256 hex hash', async () => {
    const prefix = token.slice(0, 'mya_'.length + 8);
    const { rows } = await stack.sql.query('SELECT name, key_prefix, key_hash, row_to_json(pc)::text AS row FROM platform_credentials pc WHERE key_prefix = $1', [prefix]);
    expect(rows).toHaveLength(1);
    expect(rows[0].name).toBe('ops');
    expect(rows[0].key_hash).toBe(sha256Hex(token));
    const secret = token.slice(prefix.length + 1);
    expect(rows[0].row).not.toContain(secret);
  });

  it('also reads the database from SERVICE_DATABASE_URL', async () => {
    const viaEnv = await cliCredential('ops-env', { SERVICE_DATABASE_URL: stack.databaseUrl }, []);
    expect((await stack.call('GET', '/api/v1/admin/users', { token: viaEnv })).status).toBe(200);
  });

  it('missing --name exits 2 naming --name, and mints nothing', async () => {
    const before = await credentialCount();
    const run = await edgemail(['admin', 'create-credential', '--database-url', stack.databaseUrl]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--name');
    expect(run.stdout).not.toMatch(/mya_/);
    expect(await credentialCount()).toBe(before);
  });
});

describe('the default database', () => {
  it('without the local stack\'s credentials file, exits 1 saying where it looked', async () => {
    const empty = mkdtempSync(`${tmpdir()}/edgemail-cli-`);
    try {
      const run = await edgemail(['admin', 'create-credential', '--name', 'ops'], { EDGEMAIL_DATA_DIR: empty });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`no local database credentials in ${empty}/pg-credentials.json`);
      expect(run.stdout).toBe('');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  /** A data directory as `pnpm dev` leaves it: this install's logins and the ports it recorded. */
  const dataDirWith = (pgPort: number) => {
    const dir = mkdtempSync(`${tmpdir()}/edgemail-cli-`);
    const login = (user: string) => ({ user, password: 'not-this-servers-password' });
    writeFileSync(`${dir}/pg-credentials.json`, JSON.stringify({ superuser: login('postgres'), app: login('edgemail') }), { mode: 0o600 });
    writeFileSync(`${dir}/stack.json`, JSON.stringify({ pgPort, bridgePort: 1, workerPort: 1, inboundPort: 1, pid: 1, startedAt: new Date().toISOString() }));
    return dir;
  };

  it('uses the port pnpm dev recorded, and says so when nothing answers there', async () => {
    const port = await freePort();
    const dir = dataDirWith(port);
    try {
      const run = await edgemail(['admin', 'create-credential', '--name', 'ops'], { EDGEMAIL_DATA_DIR: dir });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`cannot reach PostgreSQL at 127.0.0.1:${port}, the local stack's database on port ${port} (recorded by pnpm dev in ${dir}/stack.json): nothing answers there (is pnpm dev running?)`);
      expect(run.stdout).toBe('');
      // EDGEMAIL_PG_PORT still wins over the record.
      const other = await freePort();
      const flagged = await edgemail(['admin', 'create-credential', '--name', 'ops'], { EDGEMAIL_DATA_DIR: dir, EDGEMAIL_PG_PORT: String(other) });
      expect(flagged.stderr).toContain(`cannot reach PostgreSQL at 127.0.0.1:${other}, the local stack's database on port ${other} (EDGEMAIL_PG_PORT)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tells another PostgreSQL (another checkout\'s stack) from this install\'s', async () => {
    const port = Number(new URL(stack.databaseUrl).port);
    const dir = dataDirWith(port);
    try {
      const before = await credentialCount();
      const run = await edgemail(['admin', 'create-credential', '--name', 'ops'], { EDGEMAIL_DATA_DIR: dir });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`cannot reach PostgreSQL at 127.0.0.1:${port}`);
      expect(run.stderr).toContain('the server refused this install\'s password: it is another PostgreSQL');
      expect(await credentialCount()).toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('usage errors', () => {
  it('help, --help and -h print the usage on stdout and exit 0, even with a malformed setting', async () => {
    for (const args of [['help'], ['--help'], ['-h'], ['help', 'tls'], ['tls', '--help']]) {
      const run = await edgemail(args, { SERVICE_RATELIMIT_API_PER_MINUTE: 'lots' });
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      expect(run.stdout, args.join(' ')).toMatch(/^usage: edgemail <command>\n/);
      expect(run.stdout, args.join(' ')).toContain('tls status [--database-url <url>]');
      expect(run.stderr, args.join(' ')).toBe('');
    }
  });

  it('an unknown command exits 2', async () => {
    const run = await edgemail(['frobnicate']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('frobnicate');
  });

  it('a malformed setting in the environment exits 2 naming it, before touching the database', async () => {
    const before = await credentialCount();
    const run = await edgemail(['admin', 'create-credential', '--name', 'ops', '--database-url', stack.databaseUrl],
      { SERVICE_RATELIMIT_API_PER_MINUTE: 'lots' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('ratelimit.api_per_minute');
    expect(run.stdout).toBe('');
    expect(await credentialCount()).toBe(before);
  });
});

describe('removed settings at boot', () => {
  const REMOVED = { SERVICE_TLS_MODE: 'acme', SERVICE_SUBMISSION_TLS_ACME_EMAIL: 'ops@example.com' };
  const NAMED = 'edgemail: removed settings are set and ignored: tls.mode, SERVICE_SUBMISSION_TLS_ACME_EMAIL';

  it('are named on stderr, and the command still runs', async () => {
    const run = await edgemail(['admin', 'create-credential', '--name', 'removed-keys', '--database-url', stack.databaseUrl], REMOVED);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(PLATFORM_TOKEN);
    expect(run.stderr.split('\n')).toContain(NAMED);
    const clean = await edgemail(['admin', 'create-credential', '--name', 'no-removed-keys', '--database-url', stack.databaseUrl]);
    expect(clean.stderr).not.toContain('removed settings');
  });

  it('are named by relay start before the node starts', async () => {
    const stateDir = mkdtempSync(`${tmpdir()}/edgemail-relay-`);
    try {
      const run = await edgemail(['relay', 'start', '--state-dir', stateDir, '--port', '0', '--submission-port', '0', '--host', '127.0.0.1'], REMOVED);
      const lines = run.stderr.split('\n');
      expect(lines).toContain(NAMED);
      // This state directory holds no enrolment: the node itself never came up.
      expect(run.code).toBe(1);
      expect(lines.findIndex((l) => l.includes('no relay node is enrolled'))).toBeGreaterThan(lines.indexOf(NAMED));
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

describe('edgemail relay scope', () => {
  it('widens a node to every project and narrows it back; refuses a missing or unknown node', async () => {
    const { rows: [project] } = await stack.sql.query(`INSERT INTO projects (name) VALUES ('scoped') RETURNING id`);
    const { rows: [node] } = await stack.sql.query(
      `INSERT INTO relay_nodes (project_id, name, key_prefix, key_hash) VALUES ($1, 'mx', 'myr_scope001', 'x') RETURNING id`, [project.id]);
    const scope = async () => (await stack.sql.query('SELECT installation_wide FROM relay_nodes WHERE id = $1', [node.id])).rows[0].installation_wide;
    expect(await scope()).toBe(false);

    const wide = await edgemail(['relay', 'scope', '--node', node.id, '--installation-wide', '--database-url', stack.databaseUrl]);
    expect([wide.code, wide.stderr.trim()]).toEqual([0, `relay node ${node.id} now serves every project's domains`]);
    expect(await scope()).toBe(true);
    expect((await edgemail(['relay', 'scope', '--node', node.id, '--project-only', '--database-url', stack.databaseUrl])).code).toBe(0);
    expect(await scope()).toBe(false);

    const missing = await edgemail(['relay', 'scope', '--installation-wide', '--database-url', stack.databaseUrl]);
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringContaining('--node <id> (a UUID) is required')]);
    const both = await edgemail(['relay', 'scope', '--node', node.id, '--installation-wide', '--project-only', '--database-url', stack.databaseUrl]);
    expect([both.code, both.stderr]).toEqual([2, expect.stringContaining('exactly one of --installation-wide and --project-only')]);
    const unknown = crypto.randomUUID();
    const nobody = await edgemail(['relay', 'scope', '--node', unknown, '--installation-wide', '--database-url', stack.databaseUrl]);
    expect([nobody.code, nobody.stderr]).toEqual([2, expect.stringContaining(`no relay node ${unknown}`)]);
    expect(await scope()).toBe(false);
  });
});

describe('the README bootstrap flow', () => {
  it('goes from nothing to a working project key', async () => {
    const admin = await cliCredential('bootstrap', { SERVICE_DATABASE_URL: stack.databaseUrl }, [], true);
    const asAdmin = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
      stack.call(method, path, { token: admin, body, headers });

    const plan = await asAdmin('POST', '/api/v1/admin/plans', { name: 'starter', hourly_email_limit: 100, daily_email_limit: 1000 });
    expect(plan.status, JSON.stringify(plan.body)).toBe(201);
    expect(plan.body.plan).toMatchObject({ name: 'starter', hourly_email_limit: 100, daily_email_limit: 1000 });

    const user = await asAdmin('POST', '/api/v1/admin/users', { email: 'ada@example.com', name: 'Ada' });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    expect(user.body.user).toMatchObject({ email: 'ada@example.com', name: 'Ada' });

    const project = await asAdmin('POST', '/api/v1/admin/projects', { name: 'acme', plan_id: plan.body.plan.id, owner_id: user.body.user.id });
    expect(project.status, JSON.stringify(project.body)).toBe(201);
    expect(project.body.project).toMatchObject({ name: 'acme', plan_id: plan.body.plan.id });

    const users = await asAdmin('GET', '/api/v1/admin/users');
    expect(users.body.users).toEqual(expect.arrayContaining([expect.objectContaining({ id: user.body.user.id, default_project_id: project.body.project.id })]));

    const created = await asAdmin('POST', '/api/v1/api-keys', { name: 'backend', permissions: ['apikeys:read', 'emails:write'] },
      { 'X-Service-Project-Id': project.body.project.id });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { api_key: apiKey, token } = created.body;
    expect(token).toMatch(PROJECT_TOKEN);
    expect(apiKey).toMatchObject({ project_id: project.body.project.id, name: 'backend', permissions: ['apikeys:read', 'emails:write'], revoked: false });
    expect(token.startsWith(`${apiKey.key_prefix}_`)).toBe(true);

    const list = await stack.call('GET', '/api/v1/api-keys', { token });
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body.api_keys).toEqual([expect.objectContaining({ id: apiKey.id, key_prefix: apiKey.key_prefix })]);
    const text = JSON.stringify(list.body);
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.slice(apiKey.key_prefix.length + 1));
    expect(list.body.api_keys[0]).not.toHaveProperty('token');
  });
});

describe('edgemail config-docs', () => {
  it('prints exactly the committed docs/config.md', async () => {
    const run = await edgemail(['config-docs']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(readFileSync(`${ROOT}docs/config.md`, 'utf8'));
  });
});
