// Reading the account security trail (docs/audit.md "Reading the security
// trail"): a person's own events on the console surface, newest first and
// paged, never another user's; every account's for a platform admin, filtered
// by user and type; each refused to the credentials that may not read it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, startTestStack, type TestStack } from './support/stack.js';
import { consoleUser, cookieOf, signIn, withSession } from './support/console.js';

const PASSWORD = 'correct horse battery staple';

let stack: TestStack;
let admin: string;
let ann: Awaited<ReturnType<typeof person>>;
let bob: Awaited<ReturnType<typeof person>>;

const userAgentOf = (name: string) => `Mozilla/5.0 (${name}'s browser)`;

/** A user who failed once (wrong password) and then signed in, from `ip`. */
async function person(name: string, ip: string) {
  const tenant = await consoleUser(stack, admin, PASSWORD, name);
  // Each from its own browser: the trail records the User-Agent it sent.
  const from = (password: string) => stack.call('POST', '/app/api/session', {
    body: { email: tenant.user.email, password }, headers: { origin: new URL(stack.url).origin, 'cf-connecting-ip': ip, 'user-agent': userAgentOf(name) },
  });
  const failed = await from(`${PASSWORD}!`);
  expect(failed.status).toBe(401);
  const ok = await from(PASSWORD);
  expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  return { ...tenant, cookie: cookieOf(ok.headers.get('set-cookie')) };
}

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack);
  ann = await person('ann', '198.51.100.7');
  bob = await person('bob', '198.51.100.8');
});
afterAll(async () => { await stack?.stop(); });

const ownTrail = (cookie: string, query = '') => stack.call('GET', `/app/api/account/security-events${query}`, { headers: withSession(stack, cookie) });
const adminTrail = (query: string, token = admin) => stack.call('GET', `/api/v1/admin/security-events${query}`, { token });
const idsOf = async (userId: string) => (await stack.sql.query(`SELECT id FROM audit_events WHERE actor_id = $1`, [userId])).rows.map((r) => r.id as string);

describe('a person\'s own trail', () => {
  test('shows their sign-in and refused sign-in, newest first, with detail, address and time', async () => {
    const r = await ownTrail(ann.cookie);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ limit: 50, offset: 0 });
    expect(r.body.events).toEqual([
      { id: expect.any(String), type: 'auth.login.succeeded', detail: 'password', client_ip: '198.51.100.7', user_agent: userAgentOf('ann'), created_at: expect.any(String) },
      { id: expect.any(String), type: 'auth.login.failed', detail: 'password', client_ip: '198.51.100.7', user_agent: userAgentOf('ann'), created_at: expect.any(String) },
    ]);
    const [newer, older] = r.body.events.map((e: { created_at: string }) => Date.parse(e.created_at));
    expect(newer).toBeGreaterThanOrEqual(older);
  });

  test('never shows another user\'s events, nor a sign-in tried with an unknown email', async () => {
    const unknown = await signIn(stack, { email: `nobody-${crypto.randomUUID().slice(0, 8)}@example.com`, password: PASSWORD });
    expect(unknown.status).toBe(401);
    const bobs = await idsOf(bob.user.id);
    expect(bobs.length).toBeGreaterThanOrEqual(2);
    const seen = (await ownTrail(ann.cookie)).body.events.map((e: { id: string }) => e.id);
    expect(seen.filter((id: string) => bobs.includes(id))).toEqual([]);
    const anns = await idsOf(ann.user.id);
    expect(seen.every((id: string) => anns.includes(id))).toBe(true);
    // Bob sees his own two, not Ann's.
    const his = (await ownTrail(bob.cookie)).body.events;
    expect(his.map((e: { type: string }) => e.type)).toEqual(['auth.login.succeeded', 'auth.login.failed']);
    expect(his.every((e: { id: string }) => bobs.includes(e.id))).toBe(true);
  });

  test('pages by limit and offset', async () => {
    const all = (await ownTrail(ann.cookie)).body.events;
    const first = await ownTrail(ann.cookie, '?limit=1');
    const second = await ownTrail(ann.cookie, '?limit=1&offset=1');
    const past = await ownTrail(ann.cookie, `?offset=${all.length}`);
    expect(first.body).toEqual({ events: [all[0]], limit: 1, offset: 0 });
    expect(second.body).toEqual({ events: [all[1]], limit: 1, offset: 1 });
    expect(past.body.events).toEqual([]);
  });

  test('a bad page is a 400 naming the parameter', async () => {
    for (const query of ['?limit=0', '?limit=201', '?offset=-1', '?limit=ten']) {
      const r = await ownTrail(ann.cookie, query);
      expect(r.status, query).toBe(400);
      expect(Object.keys(r.body.fields ?? {}), query).toEqual([query.includes('limit') ? 'limit' : 'offset']);
    }
  });

  test('needs a session: none is 401, a key or platform credential is refused (spec "Authentication" item 9)', async () => {
    const none = await stack.call('GET', '/app/api/account/security-events');
    expect(none.status).toBe(401);
    const { token } = await ann.key(['audit:read']);
    for (const credential of [token, admin]) {
      const r = await stack.call('GET', '/app/api/account/security-events', { token: credential });
      expect(r.status).toBe(403);
      expect(r.body.error).toMatch(/not accepted on \/app\/api/);
    }
  });
});

describe('the platform admin\'s view', () => {
  test('lists every account\'s events, newest first, with the account and the request', async () => {
    const r = await adminTrail('');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const users = new Set(r.body.events.map((e: { user_id: string | null }) => e.user_id));
    expect(users.has(ann.user.id) && users.has(bob.user.id)).toBe(true);
    const times = r.body.events.map((e: { created_at: string }) => Date.parse(e.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(r.body.events.find((e: { user_id: string }) => e.user_id === bob.user.id)).toMatchObject({
      type: 'auth.login.succeeded', detail: 'password', actor_email: bob.user.email, method: 'POST', path: '/app/api/session', status: 200, client_ip: '198.51.100.8', user_agent: userAgentOf('bob'),
    });
  });

  test('filters by user and by type, and pages', async () => {
    const anns = await adminTrail(`?user_id=${ann.user.id}`);
    expect(anns.status).toBe(200);
    expect(anns.body.events.map((e: { type: string }) => e.type)).toEqual(['auth.login.succeeded', 'auth.login.failed']);
    expect(anns.body.events.every((e: { user_id: string }) => e.user_id === ann.user.id)).toBe(true);

    const failed = await adminTrail(`?user_id=${bob.user.id}&type=auth.login.failed`);
    expect(failed.body.events).toMatchObject([{ user_id: bob.user.id, type: 'auth.login.failed', detail: 'password', status: 401 }]);

    const everyFailure = await adminTrail('?type=auth.login.failed');
    expect(everyFailure.body.events.length).toBeGreaterThanOrEqual(2);
    expect(everyFailure.body.events.every((e: { type: string }) => e.type === 'auth.login.failed')).toBe(true);

    const page = await adminTrail(`?user_id=${ann.user.id}&limit=1&offset=1`);
    expect(page.body).toEqual({ events: [anns.body.events[1]], limit: 1, offset: 1 });
  });

  test('bad filters are a 400 naming them', async () => {
    for (const [query, field] of [['?user_id=ann', 'user_id'], ['?type=DROP%20TABLE', 'type'], ['?limit=500', 'limit']] as const) {
      const r = await adminTrail(query);
      expect(r.status, query).toBe(400);
      expect(Object.keys(r.body.fields ?? {}), query).toEqual([field]);
    }
  });

  test('is refused to sessions and project keys (403) and to no credential (401), as the admin surface is', async () => {
    const none = await stack.call('GET', '/api/v1/admin/security-events');
    expect(none.status).toBe(401);
    const session = await stack.call('GET', '/api/v1/admin/security-events', { headers: withSession(stack, ann.cookie) });
    expect(session.status).toBe(403);
    const { token } = await ann.key(['audit:read']);
    const key = await adminTrail('', token);
    expect(key.status).toBe(403);
  });
});
