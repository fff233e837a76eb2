// The database unreachable (issue 33, "HTTP" 4): the Worker's Neon bridge is
// stopped mid-test, as Neon being down or the local bridge gone looks to the
// Worker (its SQL-over-HTTP fetch fails). Every route answers 503 with
// Retry-After instead of 500, the outage is logged once, not per request, and
// the routes answer as before once the bridge is back on the same address.
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { startNeonBridge, type NeonBridge } from '../edge/local/neon-bridge.js';
import { platformToken, seedProject, sessionCookie, startTestStack, type SeededProject, type TestStack } from './support/stack.js';
import { withSession } from './support/console.js';
import { eventually } from './support/wait.js';

const UNAVAILABLE = { error: 'service temporarily unavailable: the database did not answer; retry later' };

let bridge: NeonBridge;
let stack: TestStack;
let admin: string;
let tenant: SeededProject;
let key: string;
let consoleHeaders: Record<string, string>;

const startBridge = (port?: number) => startNeonBridge({ port, pgHost: '127.0.0.1', pgPort: inject('pgPort') });

beforeAll(async () => {
  bridge = await startBridge();
  stack = await startTestStack({ bridgeUrl: bridge.url, captureLogs: true });
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin);
  key = (await tenant.key(['*'])).token;
  consoleHeaders = withSession(stack, await sessionCookie(stack, tenant.user.id));
});
afterAll(async () => {
  await stack?.stop();
  await bridge?.close();
});

/** A few routes of each surface, as their callers make them. */
const requests = () => [
  ['GET /api/v1/domains', () => stack.call('GET', '/api/v1/domains', { token: key })],
  ['POST /api/v1/suppressions', () => stack.call('POST', '/api/v1/suppressions', { token: key, body: { address: 'gone@example.org' } })],
  ['GET /api/v1/admin/users', () => stack.call('GET', '/api/v1/admin/users', { token: admin })],
  ['GET /app/api/session', () => stack.call('GET', '/app/api/session', { headers: consoleHeaders })],
  ['GET /api/v1/domains (session)', () => stack.call('GET', '/api/v1/domains', { headers: { ...consoleHeaders, 'X-Service-Project-Id': tenant.project.id } })],
] as const;

const outageLines = () => stack.logs().filter((l) => l.message.includes('database unavailable'));
/** The Worker's console reaches the test a moment after the answer: the lines once they have settled. */
async function settledLines(expected: number) {
  await eventually(async () => outageLines(), (lines) => lines.length >= expected);
  await new Promise((r) => setTimeout(r, 500));
  return outageLines();
}

describe('the database unreachable', () => {
  test('every route answers 503 with Retry-After, logged once; 2xx again once it is back', async () => {
    for (const [label, call] of requests()) {
      const r = await call();
      expect([label, r.status]).toEqual([label, r.status >= 200 && r.status < 300 ? r.status : 'a 2xx']);
    }
    // Taken away; what the routes read is now out of reach.
    await stack.sql.query('DELETE FROM suppressions');
    await bridge.close();
    for (let round = 0; round < 2; round++) {
      for (const [label, call] of requests()) {
        const r = await call();
        expect({ label, status: r.status, body: r.body, retryAfter: r.headers.get('retry-after') })
          .toEqual({ label, status: 503, body: UNAVAILABLE, retryAfter: '5' });
      }
    }
    // Ten refusals, one line (the log names the failure and the request, never a parameter),
    // and no other line per request (the API key gate says so instead of throwing).
    const lines = await settledLines(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.message).toMatch(/^database unavailable \(request [0-9a-f-]{36}, GET \/api\/v1\/domains\): .*Error connecting to database/);
    expect(lines[0]!.message).not.toContain('gone@example.org');
    expect(stack.logs().filter((l) => l.level !== 'log' && !l.message.includes('database unavailable'))).toEqual([]);

    bridge = await startBridge(bridge.port);
    for (const [label, call] of requests()) {
      const r = await call();
      expect([label, r.status]).toEqual([label, r.status >= 200 && r.status < 300 ? r.status : 'a 2xx']);
    }
    await eventually(async () => stack.logs(), (logs) => logs.some((l) => /database answers again after \d+ s/.test(l.message)));

    // A second outage is a second line.
    await bridge.close();
    expect((await stack.call('GET', '/api/v1/domains', { token: key })).status).toBe(503);
    expect(await settledLines(2)).toHaveLength(2);
    bridge = await startBridge(bridge.port);
    expect((await stack.call('GET', '/api/v1/domains', { token: key })).status).toBe(200);
  });
});
