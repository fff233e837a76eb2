// A person's sessions (docs/console.md "Your sessions"): listing the live ones
// on every device, with the one asking marked, and ending any one of them: its
// cookie is refused on /app/api and /api/v1 alike and its event stream ends.
// Another user's session, an unknown id and a key are refused with nothing changed.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, startTestStack, type TestStack } from './support/stack.js';
import { consoleUser, cookieOf, originOf, withSession } from './support/console.js';
import { openSse, type SseStream } from './support/sse.js';
import { eventually } from './support/wait.js';

const PASSWORD = 'correct horse battery staple';

let stack: TestStack;
let admin: string;
const streams: SseStream[] = [];

beforeAll(async () => {
  stack = await startTestStack({
    settings: {
      SERVICE_RATELIMIT_LOGIN_PER_MINUTE: '1000',
      // A deleted session's stream ends within this (plus a query): short, so the test waits little.
      SERVICE_CONSOLE_EVENTS_SESSION_CHECK: '500ms',
    },
  });
  admin = await platformToken(stack);
});
afterEach(() => { for (const s of streams.splice(0)) s.close(); });
afterAll(async () => { await stack?.stop(); });

/** A password sign-in from `ip` with `agent` as the browser; the cookie and the session's id. */
async function signInAs(email: string, ip: string, agent: string) {
  const r = await stack.call('POST', '/app/api/session', {
    body: { email, password: PASSWORD }, headers: { origin: originOf(stack), 'cf-connecting-ip': ip, 'user-agent': agent },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { cookie: cookieOf(r.headers.get('set-cookie')), id: r.body.session.id as string };
}

const list = (cookie: string) => stack.call('GET', '/app/api/account/sessions', { headers: withSession(stack, cookie) });
const end = (cookie: string, id: string) => stack.call('DELETE', `/app/api/account/sessions/${id}`, { headers: withSession(stack, cookie) });
const whoAmI = (cookie: string) => stack.call('GET', '/app/api/session', { headers: withSession(stack, cookie) });
const domains = (cookie: string) => stack.call('GET', '/api/v1/domains', { headers: withSession(stack, cookie) });
const sessionRows = async (userId: string) => (await stack.sql.query('SELECT id FROM sessions WHERE user_id = $1 ORDER BY id', [userId])).rows.map((r) => r.id as string);

async function follow(cookie: string) {
  const stream = await openSse(`${stack.url}/app/api/events`, { cookie });
  streams.push(stream);
  return stream;
}

describe('listing', () => {
  test('shows each live session with how, when, where and which browser, and marks the one asking; never a token', async () => {
    const { user } = await consoleUser(stack, admin, PASSWORD, 'lister');
    const laptop = await signInAs(user.email, '198.51.100.10', 'Laptop Browser/1.0');
    const phone = await signInAs(user.email, '198.51.100.11', 'Phone Browser/2.0');

    const r = await list(laptop.cookie);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.sessions).toEqual([
      { id: phone.id, method: 'password', created_at: expect.any(String), last_seen_at: expect.any(String), expires_at: expect.any(String), client_ip: '198.51.100.11', user_agent: 'Phone Browser/2.0', current: false },
      { id: laptop.id, method: 'password', created_at: expect.any(String), last_seen_at: expect.any(String), expires_at: expect.any(String), client_ip: '198.51.100.10', user_agent: 'Laptop Browser/1.0', current: true },
    ]);
    expect(JSON.stringify(r.body)).not.toContain(laptop.cookie.split('=')[1]);
    // Asked from the phone, the phone is current.
    expect((await list(phone.cookie)).body.sessions.map((s: { id: string; current: boolean }) => [s.id, s.current])).toEqual([[phone.id, true], [laptop.id, false]]);
  });

  test('leaves out expired, idle-expired and signed-out-everywhere sessions', async () => {
    const { user } = await consoleUser(stack, admin, PASSWORD, 'stale');
    await stack.sql.query(`INSERT INTO sessions (user_id, token_hash, expires_at) VALUES ($1, md5(random()::text), now() - interval '1 minute')`, [user.id]);
    await stack.sql.query(`INSERT INTO sessions (user_id, token_hash, expires_at, last_seen_at) VALUES ($1, md5(random()::text), now() + interval '1 day', now() - interval '9 hours')`, [user.id]);
    await stack.sql.query(`UPDATE users SET sessions_valid_after = now() - interval '1 hour' WHERE id = $1`, [user.id]);
    await stack.sql.query(`INSERT INTO sessions (user_id, token_hash, expires_at, created_at) VALUES ($1, md5(random()::text), now() + interval '1 day', now() - interval '2 hours')`, [user.id]);
    const live = await signInAs(user.email, '198.51.100.12', 'Only/1.0');
    const r = await list(live.cookie);
    expect(r.body.sessions.map((s: { id: string }) => s.id)).toEqual([live.id]);
  });
});

describe('ending one', () => {
  test('ends the other session: its cookie is 401 on /app/api and /api/v1, its event stream ends, this one stays, and the trail says so', async () => {
    const { user } = await consoleUser(stack, admin, PASSWORD, 'ender');
    const laptop = await signInAs(user.email, '198.51.100.20', 'Laptop/1.0');
    const lost = await signInAs(user.email, '198.51.100.21', 'Lost phone/1.0');
    expect((await domains(lost.cookie)).status).toBe(200);
    const lostStream = await follow(lost.cookie);
    const keptStream = await follow(laptop.cookie);
    expect([lostStream.status, keptStream.status]).toEqual([200, 200]);

    const r = await end(laptop.cookie, lost.id);
    expect(r.status, JSON.stringify(r.body)).toBe(204);
    expect(r.headers.get('set-cookie')).toBeNull();

    expect((await whoAmI(lost.cookie)).status).toBe(401);
    expect((await domains(lost.cookie)).status).toBe(401);
    await lostStream.ended;
    expect(lostStream.events.at(-1)?.event).toBe('end');
    expect(JSON.parse(lostStream.events.at(-1)!.data).reason).toMatch(/session ended/);
    // A new connection with the ended session is refused.
    expect((await follow(lost.cookie)).status).toBe(401);

    expect((await whoAmI(laptop.cookie)).status).toBe(200);
    expect(keptStream.events.some((e) => e.event === 'end')).toBe(false);
    expect((await list(laptop.cookie)).body.sessions.map((s: { id: string }) => s.id)).toEqual([laptop.id]);

    const trail = await eventually(
      async () => (await stack.call('GET', '/app/api/account/security-events', { headers: withSession(stack, laptop.cookie) })).body.events,
      (events: { type: string }[]) => events.some((e) => e.type === 'auth.session.revoked'),
    );
    expect(trail[0]).toMatchObject({ type: 'auth.session.revoked', detail: null, client_ip: expect.any(String) });
    const { rows } = await stack.sql.query(`SELECT path, status FROM audit_events WHERE actor_id = $1 AND type = 'auth.session.revoked'`, [user.id]);
    expect(rows).toEqual([{ path: `/app/api/account/sessions/${lost.id}`, status: 204 }]);
  });

  test('ending this very session signs it out and clears the cookie', async () => {
    const { user } = await consoleUser(stack, admin, PASSWORD, 'self');
    const me = await signInAs(user.email, '198.51.100.30', 'Me/1.0');
    const r = await end(me.cookie, me.id);
    expect(r.status).toBe(204);
    expect(r.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await whoAmI(me.cookie)).status).toBe(401);
  });

  test('another user\'s session, an unknown id and a malformed one are refused, with nothing changed', async () => {
    const ann = await consoleUser(stack, admin, PASSWORD, 'ann');
    const bob = await consoleUser(stack, admin, PASSWORD, 'bob');
    const annSession = await signInAs(ann.user.email, '198.51.100.40', 'Ann/1.0');
    const bobSession = await signInAs(bob.user.email, '198.51.100.41', 'Bob/1.0');
    const before = [...await sessionRows(ann.user.id), ...await sessionRows(bob.user.id)];

    const foreign = await end(annSession.cookie, bobSession.id);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'session not found' });
    const unknown = await end(annSession.cookie, crypto.randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'session not found' });
    const malformed = await end(annSession.cookie, 'not-a-uuid');
    expect(malformed.status).toBe(400);
    expect(malformed.body.fields).toHaveProperty('id');

    expect([...await sessionRows(ann.user.id), ...await sessionRows(bob.user.id)]).toEqual(before);
    expect((await whoAmI(bobSession.cookie)).status).toBe(200);
    // Bob's session is not in Ann's list either.
    expect((await list(annSession.cookie)).body.sessions.map((s: { id: string }) => s.id)).toEqual([annSession.id]);
    const { rows } = await stack.sql.query(`SELECT count(*)::int AS n FROM audit_events WHERE type = 'auth.session.revoked' AND actor_id = $1`, [ann.user.id]);
    expect(rows[0].n).toBe(0);
  });

  test('a key or platform credential is refused on both routes (spec "Authentication" item 9), and no cookie is 401', async () => {
    const tenant = await consoleUser(stack, admin, PASSWORD, 'keyed');
    const session = await signInAs(tenant.user.email, '198.51.100.50', 'Keyed/1.0');
    const { token } = await tenant.key([]);
    for (const credential of [token, admin]) {
      const listed = await stack.call('GET', '/app/api/account/sessions', { token: credential });
      const ended = await stack.call('DELETE', `/app/api/account/sessions/${session.id}`, { token: credential, headers: { origin: originOf(stack) } });
      expect([listed.status, ended.status]).toEqual([403, 403]);
      expect(ended.body.error).toMatch(/not accepted on \/app\/api/);
    }
    expect((await stack.call('GET', '/app/api/account/sessions')).status).toBe(401);
    expect((await stack.call('DELETE', `/app/api/account/sessions/${session.id}`, { headers: { origin: originOf(stack) } })).status).toBe(401);
    expect((await whoAmI(session.cookie)).status).toBe(200);
  });
});
