// The TypeScript client's 429s (issue 28 "Errors", "Transport"): a plan's send
// limit and the per-key request rate, told apart, and the client's own retry
// of a rate-limited call waiting out the Retry-After the API sent.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Edgemail, EdgemailAdmin, EdgemailError, RateLimitedError } from '../clients/typescript/src/index.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';

const PER_MINUTE = 4;
let stack: TestStack;
let admin: string;
let tenant: Awaited<ReturnType<typeof seedProject>>;
beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_RATELIMIT_API_PER_MINUTE: String(PER_MINUTE) } });
  // Credentials straight in the database, so that no request spends a window before the tests.
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin);
});
afterAll(async () => { await stack?.stop(); });

/** A fetch passing to the real one that keeps when each request left and the Retry-After of each answer. */
function timedFetch() {
  const at: number[] = [];
  const retryAfter: (string | null)[] = [];
  const f: typeof fetch = async (input, init) => {
    at.push(Date.now());
    const response = await fetch(input, init);
    retryAfter.push(response.headers.get('retry-after'));
    return response;
  };
  return { fetch: f, at, retryAfter };
}

async function refusal(call: Promise<unknown>): Promise<EdgemailError> {
  try { await call; } catch (e) { if (e instanceof EdgemailError) return e; throw e; }
  throw new Error('the call succeeded');
}

describe('429', () => {
  test('a plan\'s hourly limit is a plan_limit 429, not retried; the message is the API\'s', async () => {
    const ops = new EdgemailAdmin({ apiKey: await platformToken(stack, { name: 'plans' }), baseUrl: stack.url });
    const { plan } = await ops.plans.create({ name: 'one-an-hour', hourly_email_limit: 1, daily_email_limit: 0 });
    const { project } = await ops.projects.create({ name: 'limited', plan_id: plan.id });
    const inProject = new EdgemailAdmin({ apiKey: admin, baseUrl: stack.url, headers: { 'X-Service-Project-Id': project.id } });
    const keyFor = async (permissions: string[]) =>
      ((await (await inProject.request({ method: 'POST', path: '/api/v1/api-keys', body: { name: permissions.join(','), permissions } })).json()) as { token: string }).token;
    const { domain } = await new Edgemail({ apiKey: await keyFor(['domains:write']), baseUrl: stack.url }).domains.create({ name: 'limited.test' });
    await stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domain.id]);
    const token = await keyFor(['emails:write']);

    const timed = timedFetch();
    const mail = new Edgemail({ apiKey: token, baseUrl: stack.url, fetch: timed.fetch });
    const message = { from: 'news@limited.test', to: ['ann@example.org'], subject: 'hi', text: 'x' };
    await mail.emails.send(message);
    const e = await refusal(mail.emails.send(message));
    expect(e).toBeInstanceOf(RateLimitedError);
    const limited = e as RateLimitedError;
    expect(limited.status).toBe(429);
    expect(limited.kind).toBe('plan_limit');
    expect(limited.isPlanLimit).toBe(true);
    expect(limited.message).toBe('hourly email limit reached (1 per hour on plan one-an-hour)');
    expect(timed.at).toHaveLength(2); // a send carries an Idempotency-Key, but waiting out a plan limit is no retry
  });

  test('the request rate: a request_rate 429 with Retry-After and the RateLimit headers; the client waits it out and retries', async () => {
    // Fixed one-minute windows: start 10-15 s before one ends, so that Retry-After is short and a slow machine
    // still has the whole burst and the first retrying attempt inside the same window. A run that a loaded
    // machine spread over two windows before the retrying call left proves nothing either way: it is run again,
    // with a fresh key, once.
    const windowOf = () => Math.floor(Date.now() / 60_000);
    async function burst(attempt: number) {
      // Each key is minted by a platform credential of its own: the file's `admin` may have used up its own window.
      const minter = await platformToken(stack, { name: `request-rate-${attempt}` });
      const minted = await stack.call('POST', '/api/v1/api-keys', { token: minter, headers: { 'X-Service-Project-Id': tenant.project.id }, body: { name: `request-rate-${attempt}`, permissions: ['apikeys:read'] } });
      expect(minted.status, JSON.stringify(minted.body)).toBe(201);
      const { token } = minted.body as { token: string };
      const intoWindow = Date.now() % 60_000;
      const wait = intoWindow < 45_000 ? 45_000 - intoWindow : intoWindow > 50_000 ? 60_000 - intoWindow + 45_000 : 0;
      await new Promise((r) => setTimeout(r, wait));

      const window = windowOf();
      const plain = new Edgemail({ apiKey: token, baseUrl: stack.url, maxRetries: 0 });
      for (let i = 0; i < PER_MINUTE; i++) await plain.apiKeys.list();
      const refused = await plain.apiKeys.list().then(() => null, (err: unknown) => err);
      return { token, refused, oneWindow: windowOf() === window };
    }

    let run = await burst(0);
    if (!run.oneWindow) run = await burst(1);
    if (!run.oneWindow) throw new Error('two bursts each spread over two windows: the machine is too loaded to judge');
    const { token, refused: e } = run;
    expect(e, `${PER_MINUTE + 1} calls inside one window all succeeded`).toBeInstanceOf(RateLimitedError);
    const limited = e as RateLimitedError;
    expect(limited.kind).toBe('request_rate');
    expect(limited.message).toBe(`rate limit exceeded: ${PER_MINUTE} requests per minute`);
    expect(limited.retryAfter).toBeGreaterThanOrEqual(1);
    expect(limited.retryAfter).toBeLessThanOrEqual(16);
    expect(limited.rateLimit).toMatchObject({ limit: PER_MINUTE, remaining: 0 });

    // The same call with retries: the second attempt leaves no sooner than Retry-After said, and succeeds in the next window.
    const timed = timedFetch();
    const retrying = new Edgemail({ apiKey: token, baseUrl: stack.url, fetch: timed.fetch, maxRetries: 3 });
    const started = Date.now();
    const answer = await retrying.apiKeys.list();
    expect(answer.api_keys.length).toBeGreaterThan(0);
    expect(timed.at).toHaveLength(2);
    const asked = Number(timed.retryAfter[0]);
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(timed.at[1]! - timed.at[0]!).toBeGreaterThanOrEqual(asked * 1000 - 50);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 200_000);
});
