// wrangler's dev proxy, as patched (patches/wrangler@4.86.0.patch): a request
// written on a pooled connection just as that connection idles out (kj's 5 s
// client and server idle timers race, workers-sdk#14641) reaches the Worker
// once, body and all, instead of a 503 "Your worker restarted mid-request".
// Unpatched, gaps of 4,987–4,992 ms lost about one request in three here.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';

let stack: TestStack;
let admin: string;
let tenant: Awaited<ReturnType<typeof seedProject>>;

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin);
});
afterAll(async () => { await stack?.stop(); });

const idle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a POST sent as the proxy\'s idle connection closes is delivered exactly once, with its body', async () => {
  const names: string[] = [];
  for (let gap = 4_986; gap <= 4_993; gap++) {
    await idle(gap);
    // Two at once, so more than one pooled connection idles out.
    const round = [0, 1].map((i) => `idle-${gap}-${i}`);
    names.push(...round);
    const answers = await Promise.all(round.map((name) => stack.call('POST', '/api/v1/api-keys', {
      token: admin, headers: { 'X-Service-Project-Id': tenant.project.id }, body: { name, permissions: ['emails:read'] },
    })));
    for (const [i, answer] of answers.entries()) {
      expect(answer.status, `${round[i]}: ${JSON.stringify(answer.body)}`).toBe(201);
      expect(answer.body.api_key.name).toBe(round[i]);
    }
  }
  const { rows } = await stack.sql.query<{ name: string; n: number }>(
    'SELECT name, count(*)::int AS n FROM api_keys WHERE name LIKE $1 GROUP BY name ORDER BY name', ['idle-%']);
  expect(rows).toEqual([...names].sort().map((name) => ({ name, n: 1 })));
}, 90_000);
