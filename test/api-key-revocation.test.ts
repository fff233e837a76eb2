// A change to a project API key holds for every request that starts after the
// change answered, even while other requests with the key are in flight (the
// spec: revocation is effective on the next request). Each key's requests go
// through its ApiKeyGate Durable Object, which shares database reads among
// concurrent requests: these tests load the key while changing it.
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { startEdgeWorker } from '../edge/local/edge-worker.js';
import { platformToken, seedProject, startTestStack, type SeededProject, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const CLIENT = '198.51.100.7';

let stack: TestStack;
let admin: string;
let tenant: SeededProject;

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin);
});
afterAll(async () => { await stack?.stop(); });

interface Sent { startedAt: number; answeredAt: number; status: number; error: string | undefined }

/** Keeps `connections` requests with `token` in flight against `baseUrl` until stopped; records each one's start and answer. */
function burst(baseUrl: string, token: string, connections = 8) {
  const sent: Sent[] = [];
  let running = true;
  const loops = Array.from({ length: connections }, async () => {
    while (running) {
      const startedAt = performance.now();
      const res = await fetch(`${baseUrl}/api/v1/api-keys`, { headers: { authorization: `Bearer ${token}`, 'cf-connecting-ip': CLIENT } });
      const body = await res.json() as { error?: string };
      sent.push({ startedAt, answeredAt: performance.now(), status: res.status, error: body.error });
    }
  });
  return {
    sent,
    startedAfter: (t: number) => sent.filter((s) => s.startedAt > t),
    stop: async () => { running = false; await Promise.all(loops); },
  };
}

/**
 * Loads the key on each of `baseUrls`, makes `change` while the load runs, and
 * expects every request started after the change answered to get `refusal`.
 */
async function refusedRightAfter(token: string, change: () => Promise<void>, refusal: { status: number; error: string }, baseUrls = [stack.url]) {
  const loads = baseUrls.map((url) => burst(url, token));
  try {
    // The key works under load first.
    for (const load of loads) await eventually(async () => load.sent.filter((s) => s.status === 200).length, (n) => n >= 20);
    const changeSentAt = performance.now();
    await change();
    const answeredAt = performance.now();
    for (const load of loads) await eventually(async () => load.startedAfter(answeredAt).length, (n) => n >= 20);
    for (const load of loads) {
      await load.stop();
      // Requests were in flight while the change was made…
      expect(load.sent.filter((s) => s.startedAt < answeredAt && s.answeredAt > changeSentAt).length).toBeGreaterThan(0);
      // …and none that started after it answered got through.
      const after = load.startedAfter(answeredAt);
      expect(after.map((s) => ({ status: s.status, error: s.error }))).toEqual(after.map(() => refusal));
    }
  } finally {
    await Promise.all(loads.map((load) => load.stop()));
  }
}

const asAdmin = (project: { id: string }) => ({ token: admin, headers: { 'X-Service-Project-Id': project.id } });

describe('a key changed while requests with it are in flight', () => {
  test('revoked: every request that starts after the revoke answered is 401', async () => {
    const { token, api_key } = await tenant.key(['apikeys:read']);
    await refusedRightAfter(token, async () => {
      const r = await stack.call('POST', `/api/v1/api-keys/${api_key.id}/revoke`, asAdmin(tenant.project));
      expect(r.status).toBe(200);
    }, { status: 401, error: 'API key revoked' });
  });

  test('deleted: 401 invalid API key from the next request on', async () => {
    const { token, api_key } = await tenant.key(['apikeys:read']);
    await refusedRightAfter(token, async () => {
      expect((await stack.call('DELETE', `/api/v1/api-keys/${api_key.id}`, asAdmin(tenant.project))).status).toBe(204);
    }, { status: 401, error: 'invalid API key' });
  });

  test('its project deleted: its keys are invalid from the next request on', async () => {
    const doomed = await seedProject(stack, admin, 'doomed');
    const { token } = await doomed.key(['apikeys:read']);
    await refusedRightAfter(token, async () => {
      expect((await stack.call('DELETE', '/api/v1/project', asAdmin(doomed.project))).status).toBe(204);
    }, { status: 401, error: 'invalid API key' });
  });

  // There is no route changing a key's permissions or allowed_ips; a change made
  // straight in the database holds at once too, because nothing is cached.
  test('its allowed_ips narrowed in the database: 403 from the next request on', async () => {
    const { token, api_key } = await tenant.key(['apikeys:read']);
    await refusedRightAfter(token, async () => {
      await stack.sql.query(`UPDATE api_keys SET allowed_ips = '{10.0.0.0/8}' WHERE id = $1`, [api_key.id]);
    }, { status: 403, error: `API key not allowed from address ${CLIENT}` });
  });

  test('its permissions emptied in the database: 403 from the next request on', async () => {
    const { token, api_key } = await tenant.key(['apikeys:read']);
    await refusedRightAfter(token, async () => {
      await stack.sql.query(`UPDATE api_keys SET permissions = '{}' WHERE id = $1`, [api_key.id]);
    }, { status: 403, error: 'no access to apikeys in this project' });
  });

  test('revoked through one Worker while a second one, rate limiter off, is loaded too: both refuse it next', async () => {
    // Its own workerd, so its own ApiKeyGate objects: the window is not counted there, the key is still read.
    const other = await startEdgeWorker({
      vars: { SERVICE_DATABASE_URL: stack.databaseUrl, SERVICE_DATABASE_CRYPTO_ENCRYPTION_KEY: stack.encryptionKey, SERVICE_RATELIMIT_ENABLED: 'false', LOCAL_NEON_BRIDGE: inject('bridgeUrl') },
      persistTo: false, logLevel: 'error',
    });
    try {
      const { token, api_key } = await tenant.key(['apikeys:read']);
      const unlimited = await fetch(`${other.url}/api/v1/api-keys`, { headers: { authorization: `Bearer ${token}` } });
      expect(unlimited.status).toBe(200);
      expect(unlimited.headers.get('ratelimit-limit')).toBeNull();
      await refusedRightAfter(token, async () => {
        expect((await stack.call('POST', `/api/v1/api-keys/${api_key.id}/revoke`, asAdmin(tenant.project))).status).toBe(200);
      }, { status: 401, error: 'API key revoked' }, [stack.url, other.url]);
    } finally {
      await other.stop();
    }
  });
});
