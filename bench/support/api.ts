// A benchmark's own calls on its stack: the project's API over HTTP, and SQL
// for what the bench sets up or counts directly.
import pg from 'pg';
import type { Stack } from '../../edge/local/stack.js';

/** Runs `fn` on a connection of its own to the stack's database. */
export async function sql<T>(stack: Stack, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  await client.connect();
  try { return await fn(client); } finally { await client.end(); }
}

/** A project API key named `name` with `permissions`, created with the platform credential. */
export async function mintKey(stack: Stack, platformToken: string, projectId: string, permissions: string[], name: string): Promise<string> {
  const res = await fetch(`${stack.url}/api/v1/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${platformToken}`, 'X-Service-Project-Id': projectId, 'content-type': 'application/json' },
    body: JSON.stringify({ name, permissions }),
  });
  if (res.status !== 201) throw new Error(`key creation answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

/** One API call with `token`; its JSON answer, or an error naming the status and the body. */
export async function call(stack: Stack, method: string, path: string, token: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${stack.url}${path}`, {
    method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}
