// The TypeScript client and 5xx (issue 28 "Errors", "Transport"): with the
// database out of reach every route answers 503 with Retry-After and an
// X-Request-Id; the client throws InternalServerError carrying both, retries a
// GET after the Retry-After (succeeding once the database is back), and never
// retries a POST without an Idempotency-Key.
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { startNeonBridge, type NeonBridge } from '../edge/local/neon-bridge.js';
import { Edgemail, EdgemailError, InternalServerError } from '../clients/typescript/src/index.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';

let bridge: NeonBridge;
let stack: TestStack;
let key: string;
const startBridge = (port?: number) => startNeonBridge({ port, pgHost: '127.0.0.1', pgPort: inject('pgPort') });

beforeAll(async () => {
  bridge = await startBridge();
  stack = await startTestStack({ bridgeUrl: bridge.url });
  const admin = await platformToken(stack);
  key = (await (await seedProject(stack, admin)).key(['*'])).token;
});
afterAll(async () => {
  await stack?.stop();
  await bridge?.close();
});

function countingFetch() {
  const at: number[] = [];
  const f: typeof fetch = (input, init) => { at.push(Date.now()); return fetch(input, init); };
  return { fetch: f, at };
}

async function refusal(call: Promise<unknown>): Promise<EdgemailError> {
  try { await call; } catch (e) { if (e instanceof EdgemailError) return e; throw e; }
  throw new Error('the call succeeded');
}

describe('the database out of reach', () => {
  test('503 is an InternalServerError with retryAfter and requestId; a keyless POST is tried once; a GET is retried after Retry-After and succeeds', async () => {
    const mail = (extra: Partial<ConstructorParameters<typeof Edgemail>[0]> = {}) => new Edgemail({ apiKey: key, baseUrl: stack.url, ...extra });
    expect((await mail().domains.list()).domains).toEqual([]);
    await bridge.close();

    const e = await refusal(mail({ maxRetries: 0 }).domains.list());
    expect(e).toBeInstanceOf(InternalServerError);
    expect(e.status).toBe(503);
    expect(e.message).toBe('service temporarily unavailable: the database did not answer; retry later');
    expect((e as InternalServerError).retryAfter).toBe(5);
    expect(e.requestId).toMatch(/\S/);

    const once = countingFetch();
    expect(await refusal(mail({ fetch: once.fetch, maxRetries: 3 }).suppressions.create({ address: 'gone@example.org' }))).toBeInstanceOf(InternalServerError);
    expect(once.at).toHaveLength(1);

    const retried = countingFetch();
    const pending = mail({ fetch: retried.fetch, maxRetries: 2 }).domains.list();
    await new Promise((r) => setTimeout(r, 1000));
    bridge = await startBridge(bridge.port);
    expect((await pending).domains).toEqual([]);
    expect(retried.at).toHaveLength(2);
    expect(retried.at[1]! - retried.at[0]!).toBeGreaterThanOrEqual(5000 - 50);
  }, 60_000);
});
