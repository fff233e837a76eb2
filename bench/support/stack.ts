// A throwaway stack for one measurement, and a tenant set up on it over the
// public API as a user would.
import { mkdirSync, rmSync } from 'node:fs';
import { repoRoot } from '../../edge/local/edge-worker.js';
import { startStack, type Stack } from '../../edge/local/stack.js';
import { ENCRYPTION_KEY_ENV, newEncryptionKey } from '../../edge/local/encryption-key.js';
import { withDatabase } from '../../edge/local/with-database.js';
import { createPlatformCredential } from '../../edge/src/services/platform-credentials/create.js';
import type { Tenant } from './types.js';
import { freePort } from '../../edge/local/free-port.js';
import { workerProfileDir } from './worker-profile.js';

export const cleanups = new Set<() => Promise<void>>();
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: stopping the stack…`);
    void Promise.allSettled([...cleanups].map((c) => c())).then(() => process.exit(130));
  });
}

const BENCH_ENCRYPTION_KEY = newEncryptionKey();
/** The run's `database.crypto.encryption_key`: every Worker of a run (the stack's and any variant) shares it. */
export const benchSettings = (settings: Record<string, string>) => ({ [ENCRYPTION_KEY_ENV]: BENCH_ENCRYPTION_KEY, ...settings });

/** A stack on free ports and a throwaway data directory, stopped and removed afterwards. */
export async function withStack<T>(settings: Record<string, string>, fn: (stack: Stack) => Promise<T>): Promise<T> {
  const dataDir = `${repoRoot}.data/bench-${process.pid}`;
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const removeDir = async () => rmSync(dataDir, { recursive: true, force: true });
  cleanups.add(removeDir);
  let stack: Stack | undefined;
  let stopping: Promise<void> | undefined;
  const stop = async () => {
    stopping ??= (async () => {
      await stack?.stop();
      // As root in a private checkout, PostgreSQL's data lives under /var/tmp instead.
      if (stack) rmSync(stack.postgres.dataDir, { recursive: true, force: true });
      await removeDir();
    })();
    return stopping;
  };
  cleanups.add(stop);
  try {
    console.error('  starting the stack (postgres, bridge, worker)…');
    const [pgPort, workerPort] = [await freePort(), await freePort()];
    stack = await startStack({ dataDir, pgPort, workerPort, settings: benchSettings(settings), logLevel: 'error', workerInspector: workerProfileDir() !== undefined });
    return await fn(stack);
  } finally {
    await stop();
    cleanups.delete(stop);
    cleanups.delete(removeDir);
  }
}


const KEYS = 5;

/** A platform credential minted in the database, then a user, project and keys over HTTP. */
export async function bootstrap(stack: Stack): Promise<Tenant> {
  const { token: platformToken } = await withDatabase(stack.databaseUrl, (db) =>
    createPlatformCredential(db, { name: 'bench' }));

  const { user } = await call<{ user: { id: string } }>(stack, 'POST', '/api/v1/admin/users', platformToken, {
    body: { email: `bench-${process.pid}@example.com` },
  });
  const { project } = await call<{ project: { id: string } }>(stack, 'POST', '/api/v1/admin/projects', platformToken, {
    body: { name: 'bench', owner_id: user.id },
  });
  const keys: Tenant['keys'] = [];
  for (let i = 1; i <= KEYS; i++) {
    const created = await call<{ api_key: { id: string }; token: string }>(stack, 'POST', '/api/v1/api-keys', platformToken, {
      headers: { 'X-Service-Project-Id': project.id },
      body: { name: `bench-${i}`, permissions: ['apikeys:read'] },
    });
    keys.push({ id: created.api_key.id, token: created.token });
  }
  return { platformToken, projectId: project.id, keys };
}

async function call<T>(
  stack: Stack, method: string, path: string, token: string,
  opts: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<T> {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...opts.headers },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}
