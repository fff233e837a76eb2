// The Worker refuses to serve without a usable `database.crypto.encryption_key`
// (issue 7): every request the Worker answers is 500 naming the setting, never
// its value, and the isolate logs the problem once. The console's pages are
// static assets served before the Worker (wrangler.toml `[assets]`): they load,
// and every API call they make gets the same 500.
import { afterAll, describe, expect, test } from 'vitest';
import { startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const stacks: TestStack[] = [];
afterAll(async () => { await Promise.all(stacks.map((s) => s.stop())); });

async function refusingStack(key: string) {
  const stack = await startTestStack({ settings: { SERVICE_DATABASE_CRYPTO_ENCRYPTION_KEY: key }, captureLogs: true });
  stacks.push(stack);
  return stack;
}

const PATHS: [string, string][] = [['GET', '/health'], ['GET', '/api/v1/api-keys'], ['GET', '/relay/v1/domains'], ['POST', '/relay/v1/enroll'], ['GET', '/api/v1/nowhere']];

describe.each([
  ['missing', '', 'service misconfigured: database.crypto.encryption_key (SERVICE_DATABASE_CRYPTO_ENCRYPTION_KEY) is not set'],
  ['malformed', 'c2VjcmV0LWJ1dC1ub3QtMzItYnl0ZXM=', 'service misconfigured: invalid setting database.crypto.encryption_key (SERVICE_DATABASE_CRYPTO_ENCRYPTION_KEY)'],
])('a %s key', (_, key, error) => {
  test('every request is 500 naming the setting, and the problem is logged once', async () => {
    const stack = await refusingStack(key);
    for (const [method, path] of PATHS) {
      const r = await stack.call(method, path);
      expect(r.status, `${method} ${path}`).toBe(500);
      expect(r.body).toEqual({ error });
    }
    const logged = await eventually(async () => stack.logs().filter((l) => l.message.includes('database.crypto.encryption_key')), (l) => l.length > 0);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.level).toBe('error');
    if (key) for (const entry of stack.logs()) expect(entry.message).not.toContain(key);
    const page = await fetch(`${stack.url}/emails`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
  });
});
