// Passkeys (docs/console.md "Passkeys"): registration and sign-in through a
// software authenticator that builds real WebAuthn data with WebCrypto
// (test/support/webauthn-authenticator.ts), verified by the Worker's
// @simplewebauthn/server. Several named passkeys per user, listed, renamed,
// deleted, each only its owner's; sign-in opening a session; every refused
// answer changing nothing and leaving `auth.login.failed` with its reason;
// a password-locked account still signing in; the login limiter; keys refused.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, startTestStack, type TestStack } from './support/stack.js';
import { consoleUser, cookieOf, securityEvents, signIn, withSession } from './support/console.js';
import { FLAGS, SoftwareAuthenticator, strayChallenge } from './support/webauthn-authenticator.js';
import { awayFromWindowEdge } from './support/wait.js';

const PASSWORD = 'correct horse battery staple';
const PUBLIC_URL = 'https://console.example.test';
const RP_ID = 'console.example.test';
const LOGIN_PER_MINUTE = 12;
const REFUSED = { error: 'passkey not accepted: ask for new options and try again' };

let stack: TestStack;
let admin: string;
let addresses = 0;
/** A client address no other request of this file used, so only the rate-limit test meets the limiter. */
// 198.18.0.0/15 (RFC 2544) holds 131,072 addresses: the file makes more calls than one /24 has (203.0.113.256 is no address).
const freshAddress = () => { const n = ++addresses; return `198.18.${n >> 8}.${n & 255}`; };

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_SERVER_PUBLIC_URL: PUBLIC_URL, SERVICE_RATELIMIT_LOGIN_PER_MINUTE: String(LOGIN_PER_MINUTE) } });
  admin = await platformToken(stack);
});
afterAll(async () => { await stack?.stop(); });

/** A request as the console's page would make it (same origin), with the session cookie when given. */
function call(method: string, path: string, o: { cookie?: string; body?: unknown; ip?: string } = {}) {
  const headers = o.cookie ? withSession(stack, o.cookie) : { origin: new URL(stack.url).origin };
  return stack.call(method, path, { body: o.body, headers: { ...headers, 'cf-connecting-ip': o.ip ?? freshAddress() } });
}

async function signedInUser(name: string) {
  const tenant = await consoleUser(stack, admin, PASSWORD, name);
  const r = await signIn(stack, { email: tenant.user.email, password: PASSWORD }, freshAddress());
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { ...tenant, cookie: cookieOf(r.headers.get('set-cookie')), authenticator: new SoftwareAuthenticator(PUBLIC_URL) };
}

async function addPasskey(cookie: string, authenticator: SoftwareAuthenticator, name: string) {
  const options = await call('POST', '/app/api/account/passkeys/registration-options', { cookie });
  expect(options.status, JSON.stringify(options.body)).toBe(200);
  const added = await call('POST', '/app/api/account/passkeys', { cookie, body: { name, response: await authenticator.register(options.body) } });
  expect(added.status, JSON.stringify(added.body)).toBe(201);
  return added.body.passkey as { id: string; name: string };
}

const signInOptions = async () => {
  const r = await call('POST', '/app/api/session/passkey/options');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const passkeySignIn = (response: unknown, ip?: string) => call('POST', '/app/api/session/passkey', { body: { response }, ip });

const passkeyRows = async (userId: string) => (await stack.sql.query(
  'SELECT id, name, counter, last_used_at, credential_id FROM passkeys WHERE user_id = $1 ORDER BY created_at, id', [userId])).rows;
const sessionCount = async (userId: string) => Number((await stack.sql.query('SELECT count(*) FROM sessions WHERE user_id = $1', [userId])).rows[0].count);
const failures = async (email: string) => (await securityEvents(stack.sql, email)).filter((e) => e.type === 'auth.login.failed');

describe('registering and managing passkeys', () => {
  test('two passkeys registered, listed without key material, renamed, one deleted; each change in the trail', async () => {
    const { user, cookie, authenticator } = await signedInUser('register');
    const options = await call('POST', '/app/api/account/passkeys/registration-options', { cookie });
    expect(options.body).toMatchObject({
      rp: { id: RP_ID, name: 'edgemail' }, user: { name: user.email }, attestation: 'none', timeout: 300_000,
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' }, excludeCredentials: [],
    });
    const first = await call('POST', '/app/api/account/passkeys', { cookie, body: { name: 'Laptop', response: await authenticator.register(options.body) } });
    expect(first.status).toBe(201);
    expect(first.body.passkey).toEqual({ id: expect.any(String), name: 'Laptop', created_at: expect.any(String), last_used_at: null, backed_up: false });
    const second = await addPasskey(cookie, authenticator, 'Phone');

    // The next options exclude both, so an authenticator does not make a third for the same account.
    const again = await call('POST', '/app/api/account/passkeys/registration-options', { cookie });
    expect(again.body.excludeCredentials.map((c: { id: string }) => c.id).sort()).toEqual((await passkeyRows(user.id)).map((r) => r.credential_id).sort());

    const list = await call('GET', '/app/api/account/passkeys', { cookie });
    expect(list.status).toBe(200);
    expect(list.body.passkeys.map((p: { name: string }) => p.name)).toEqual(['Laptop', 'Phone']);
    expect(Object.keys(list.body.passkeys[0]).sort()).toEqual(['backed_up', 'created_at', 'id', 'last_used_at', 'name']);

    const renamed = await call('PATCH', `/app/api/account/passkeys/${second.id}`, { cookie, body: { name: 'Work phone' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.passkey).toMatchObject({ id: second.id, name: 'Work phone' });
    for (const name of ['', ' ', 'x'.repeat(101)]) {
      const bad = await call('PATCH', `/app/api/account/passkeys/${second.id}`, { cookie, body: { name } });
      expect(bad.status).toBe(400);
      expect(bad.body.fields).toHaveProperty('name');
    }
    expect((await call('DELETE', `/app/api/account/passkeys/${first.body.passkey.id}`, { cookie })).status).toBe(204);
    expect((await call('GET', '/app/api/account/passkeys', { cookie })).body.passkeys).toMatchObject([{ id: second.id, name: 'Work phone' }]);
    expect((await call('DELETE', `/app/api/account/passkeys/${first.body.passkey.id}`, { cookie })).status).toBe(404);

    const { rows } = await stack.sql.query(
      `SELECT type FROM audit_events WHERE category = 'security' AND actor_id = $1 AND type LIKE 'auth.passkey.%' ORDER BY created_at, id`, [user.id]);
    expect(rows.map((r) => r.type)).toEqual(['auth.passkey.added', 'auth.passkey.added', 'auth.passkey.renamed', 'auth.passkey.deleted']);
  });

  test('another user\'s passkey is 404 to rename or delete, and stays as it was', async () => {
    const ada = await signedInUser('owner');
    const bob = await signedInUser('other');
    const passkey = await addPasskey(ada.cookie, ada.authenticator, 'Ada key');
    expect((await call('PATCH', `/app/api/account/passkeys/${passkey.id}`, { cookie: bob.cookie, body: { name: 'mine now' } })).status).toBe(404);
    expect((await call('DELETE', `/app/api/account/passkeys/${passkey.id}`, { cookie: bob.cookie })).status).toBe(404);
    expect((await call('GET', '/app/api/account/passkeys', { cookie: bob.cookie })).body.passkeys).toEqual([]);
    expect(await passkeyRows(ada.user.id)).toMatchObject([{ id: passkey.id, name: 'Ada key' }]);
  });

  test('a session signed in over 15 minutes ago cannot start adding one (403: sign in again); a fresh sign-in can', async () => {
    const ada = await signedInUser('stale');
    await stack.sql.query(`UPDATE sessions SET created_at = now() - interval '16 minutes' WHERE user_id = $1`, [ada.user.id]);
    const challenges = async () => Number((await stack.sql.query(`SELECT count(*) FROM auth_challenges WHERE purpose = 'webauthn.registration' AND user_id = $1`, [ada.user.id])).rows[0].count);
    const refused = await call('POST', '/app/api/account/passkeys/registration-options', { cookie: ada.cookie });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'sign in again to add a passkey: this session signed in more than 15 minutes ago' });
    expect(await challenges()).toBe(0);
    // The old session still works for everything else.
    expect((await call('GET', '/app/api/account/passkeys', { cookie: ada.cookie })).status).toBe(200);
    const fresh = await signIn(stack, { email: ada.user.email, password: PASSWORD }, freshAddress());
    await addPasskey(cookieOf(fresh.headers.get('set-cookie')), ada.authenticator, 'After signing in again');
    expect(await passkeyRows(ada.user.id)).toMatchObject([{ name: 'After signing in again' }]);
  });

  test('a session signed in over 15 minutes ago cannot rename or delete one either (403: sign in again), and nothing changes; a fresh sign-in can', async () => {
    const ada = await signedInUser('stale-manage');
    const passkey = await addPasskey(ada.cookie, ada.authenticator, 'Laptop');
    await stack.sql.query(`UPDATE sessions SET created_at = now() - interval '16 minutes' WHERE user_id = $1`, [ada.user.id]);
    const renamed = await call('PATCH', `/app/api/account/passkeys/${passkey.id}`, { cookie: ada.cookie, body: { name: 'Stolen' } });
    expect([renamed.status, renamed.body]).toEqual([403, { error: 'sign in again to rename a passkey: this session signed in more than 15 minutes ago' }]);
    const deleted = await call('DELETE', `/app/api/account/passkeys/${passkey.id}`, { cookie: ada.cookie });
    expect([deleted.status, deleted.body]).toEqual([403, { error: 'sign in again to delete a passkey: this session signed in more than 15 minutes ago' }]);
    expect(await passkeyRows(ada.user.id)).toMatchObject([{ id: passkey.id, name: 'Laptop' }]);
    const { rows } = await stack.sql.query(
      `SELECT type FROM audit_events WHERE category = 'security' AND actor_id = $1 AND type LIKE 'auth.passkey.%' ORDER BY created_at, id`, [ada.user.id]);
    expect(rows.map((r) => r.type)).toEqual(['auth.passkey.added']);

    const fresh = cookieOf((await signIn(stack, { email: ada.user.email, password: PASSWORD }, freshAddress())).headers.get('set-cookie'));
    expect((await call('PATCH', `/app/api/account/passkeys/${passkey.id}`, { cookie: fresh, body: { name: 'Renamed' } })).body.passkey).toMatchObject({ name: 'Renamed' });
    expect((await call('DELETE', `/app/api/account/passkeys/${passkey.id}`, { cookie: fresh })).status).toBe(204);
    expect(await passkeyRows(ada.user.id)).toEqual([]);
  });

  test('at most 20 passkeys a user: the options and the answer are 409 past it, also when ten answers race for the last place', async () => {
    const ada = await signedInUser('many');
    const seed = (n: number) => stack.sql.query(
      `INSERT INTO passkeys (user_id, name, credential_id, public_key) SELECT $1::uuid, 'seeded ' || i, 'seeded-' || $1::text || '-' || i, 'x' FROM generate_series(1, $2::int) i`, [ada.user.id, n]);
    await seed(19);
    const options = async () => {
      const r = await call('POST', '/app/api/account/passkeys/registration-options', { cookie: ada.cookie });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    };
    // Ten challenges taken at 19, answered at once: one takes the 20th place.
    const challenges = [];
    for (let i = 0; i < 10; i++) challenges.push(await options());
    const responses = await Promise.all(challenges.map((c) => new SoftwareAuthenticator(PUBLIC_URL).register(c)));
    const answers = await Promise.all(responses.map((response, i) =>
      call('POST', '/app/api/account/passkeys', { cookie: ada.cookie, body: { name: `racer ${i}`, response } })));
    expect(answers.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    for (const loser of answers.filter((r) => r.status === 409)) {
      expect(loser.body).toEqual({ error: 'a user can have at most 20 passkeys: delete one first' });
    }
    expect(await passkeyRows(ada.user.id)).toHaveLength(20);

    const full = await call('POST', '/app/api/account/passkeys/registration-options', { cookie: ada.cookie });
    expect(full.status).toBe(409);
    expect(full.body).toEqual({ error: 'a user can have at most 20 passkeys: delete one first' });
    const added = answers.find((r) => r.status === 201)!.body.passkey;
    expect((await call('DELETE', `/app/api/account/passkeys/${added.id}`, { cookie: ada.cookie })).status).toBe(204);
    expect((await call('POST', '/app/api/account/passkeys/registration-options', { cookie: ada.cookie })).status).toBe(200);
  });

  test('refused registrations store nothing: another user\'s or a reused challenge, a wrong origin or rpId, no user verification', async () => {
    const ada = await signedInUser('reg-refused');
    const bob = await signedInUser('reg-thief');
    const options = async (cookie: string) => (await call('POST', '/app/api/account/passkeys/registration-options', { cookie })).body;
    const add = (cookie: string, response: unknown) => call('POST', '/app/api/account/passkeys', { cookie, body: { name: 'key', response } });

    // Bob's challenge answered in Ada's session: not hers.
    const stolen = await add(ada.cookie, await ada.authenticator.register(await options(bob.cookie)));
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('unknown, expired or already used challenge: ask for new registration options');
    for (const [overrides, problem] of [
      [{ origin: 'https://evil.example' }, /origin/],
      [{ rpId: 'evil.example' }, /RP ID/],
      [{ flags: FLAGS.UP | FLAGS.AT }, /verif/],
    ] as const) {
      const r = await add(ada.cookie, await ada.authenticator.register(await options(ada.cookie), overrides));
      expect(r.status).toBe(400);
      expect(r.body.fields.response).toMatch(problem);
    }
    // A challenge spent by a refused answer cannot be used again, even rightly.
    const opts = await options(ada.cookie);
    expect((await add(ada.cookie, await ada.authenticator.register(opts, { origin: 'https://evil.example' }))).status).toBe(400);
    expect((await add(ada.cookie, await ada.authenticator.register(opts))).status).toBe(400);
    expect(await passkeyRows(ada.user.id)).toEqual([]);
  });
});

describe('signing in with a passkey', () => {
  test('opens a session (method passkey) whose cookie works; counter and last use stored; auth.login.succeeded', async () => {
    const { user, cookie, authenticator } = await signedInUser('passkey-in');
    const passkey = await addPasskey(cookie, authenticator, 'Laptop');
    const options = await signInOptions();
    expect(options).toMatchObject({ rpId: RP_ID, userVerification: 'required', timeout: 300_000 });
    expect(options.allowCredentials ?? []).toEqual([]);

    const r = await passkeySignIn(await authenticator.assert(options));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.user).toMatchObject({ id: user.id, email: user.email });
    expect(r.body.session).toMatchObject({ method: 'passkey' });
    const me = await call('GET', '/app/api/session', { cookie: cookieOf(r.headers.get('set-cookie')) });
    expect(me.status).toBe(200);
    expect(me.body.session).toMatchObject({ id: r.body.session.id, method: 'passkey' });
    expect(me.body.user.id).toBe(user.id);

    expect(await passkeyRows(user.id)).toMatchObject([{ id: passkey.id, counter: '1', last_used_at: expect.any(Date) }]);
    expect((await securityEvents(stack.sql, user.email)).at(-1)).toMatchObject({ type: 'auth.login.succeeded', detail: 'passkey', status: 200, actor_id: user.id });
  });

  test('each refusal is the same 401, opens nothing, moves no counter, and the trail names the reason', async () => {
    const { user, cookie, authenticator } = await signedInUser('passkey-refused');
    await addPasskey(cookie, authenticator, 'Laptop');
    const good = await signInOptions();
    expect((await passkeySignIn(await authenticator.assert(good))).status).toBe(200); // counter 1
    const before = { sessions: await sessionCount(user.id), passkeys: await passkeyRows(user.id) };

    const cases: [string, () => Promise<unknown>][] = [
      ['passkey:challenge', async () => authenticator.assert(await signInOptions(), { challenge: strayChallenge() })],
      ['passkey:challenge', async () => authenticator.assert(good)], // the challenge spent by the sign-in above
      ['passkey:origin', async () => authenticator.assert(await signInOptions(), { origin: 'https://evil.example' })],
      ['passkey:rp_id', async () => authenticator.assert(await signInOptions(), { rpId: 'evil.example' })],
      ['passkey:counter', async () => authenticator.assert(await signInOptions(), { counter: 0 })],
      ['passkey:counter', async () => authenticator.assert(await signInOptions(), { counter: 1 })], // not forward either
      ['passkey:user_verification', async () => authenticator.assert(await signInOptions(), { flags: FLAGS.UP })],
    ];
    for (const [detail, answer] of cases) {
      const r = await passkeySignIn(await answer());
      expect(r.status, detail).toBe(401);
      expect(r.body).toEqual(REFUSED);
      expect(r.headers.get('set-cookie')).toBeNull();
    }
    expect(await sessionCount(user.id)).toBe(before.sessions);
    expect(await passkeyRows(user.id)).toEqual(before.passkeys);
    // A refused challenge is judged before any credential is looked up: that event names no account (actor_id null, no email).
    const named = cases.map(([detail]) => detail).filter((d) => d !== 'passkey:challenge');
    expect((await failures(user.email)).map((e) => [e.detail, e.status, e.actor_id])).toEqual(named.map((detail) => [detail, 401, user.id]));
  });

  test('an unknown credential and a deleted passkey are refused alike and recorded', async () => {
    const { user, cookie, authenticator } = await signedInUser('passkey-gone');
    const unknownCredentialEvents = async () => Number((await stack.sql.query(
      `SELECT count(*) FROM audit_events WHERE type = 'auth.login.failed' AND detail = 'passkey:unknown_credential' AND actor_id IS NULL AND status = 401`)).rows[0].count);
    const recordedBefore = await unknownCredentialEvents();
    const passkey = await addPasskey(cookie, authenticator, 'Old key');
    expect((await call('DELETE', `/app/api/account/passkeys/${passkey.id}`, { cookie })).status).toBe(204);
    const deleted = await passkeySignIn(await authenticator.assert(await signInOptions()));
    const stranger = new SoftwareAuthenticator(PUBLIC_URL);
    await stranger.register({ challenge: strayChallenge(), rp: { id: RP_ID }, user: { id: 'bm9ib2R5' } }); // never sent to the service
    const unknown = await passkeySignIn(await stranger.assert(await signInOptions()));
    for (const r of [deleted, unknown]) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual(REFUSED);
    }
    expect(await sessionCount(user.id)).toBe(1); // the password sign-in's
    expect(await unknownCredentialEvents()).toBe(recordedBefore + 2);
  });

  test('a password-locked account still signs in with its passkey, and stays locked for passwords', async () => {
    const { user, cookie, authenticator } = await signedInUser('locked');
    await addPasskey(cookie, authenticator, 'Laptop');
    await Promise.all(Array.from({ length: 10 }, (_, i) => signIn(stack, { email: user.email, password: `wrong ${i}` }, freshAddress())));
    const lock = async () => (await stack.sql.query('SELECT password_locked_until > now() AS locked, password_locked_until AS until FROM users WHERE id = $1', [user.id])).rows[0];
    const locked = await lock();
    expect(locked.locked).toBe(true);
    expect((await signIn(stack, { email: user.email, password: PASSWORD }, freshAddress())).status).toBe(401);

    const r = await passkeySignIn(await authenticator.assert(await signInOptions()));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.session.method).toBe('passkey');
    expect(await lock()).toEqual(locked);
  });
});

describe('limits and credentials', () => {
  test('ratelimit.login_per_minute per client address counts the options and the answers', async () => {
    const { cookie, authenticator } = await signedInUser('passkey-limited');
    await addPasskey(cookie, authenticator, 'Laptop');
    await awayFromWindowEdge();
    const ip = freshAddress();
    const options = await call('POST', '/app/api/session/passkey/options', { ip });
    expect(options.status).toBe(200);
    for (let i = 1; i < LOGIN_PER_MINUTE; i++) {
      expect((await passkeySignIn(await authenticator.assert(options.body, { challenge: strayChallenge() }), ip)).status).toBe(401);
    }
    const refused = await passkeySignIn(await authenticator.assert(options.body), ip);
    expect(refused.status).toBe(429);
    expect((await call('POST', '/app/api/session/passkey/options', { ip })).status).toBe(429);
    // The right answer was refused before it was looked at: its challenge still works from elsewhere.
    expect((await passkeySignIn(await authenticator.assert(options.body))).status).toBe(200);
  });

  test('an API key (or platform credential) is refused on every passkey route', async () => {
    const { project, key, cookie } = await signedInUser('passkey-keys');
    const { token } = await key(['*']);
    for (const bearer of [token, admin]) {
      for (const [method, path] of <[string, string][]>[
        ['POST', '/app/api/account/passkeys/registration-options'], ['GET', '/app/api/account/passkeys'],
        ['POST', '/app/api/session/passkey/options'], ['POST', '/app/api/session/passkey'],
      ]) {
        const r = await stack.call(method, path, { token: bearer, headers: { 'X-Service-Project-Id': project.id }, body: method === 'POST' ? {} : undefined });
        expect(r.status, `${method} ${path}`).toBe(403);
        expect(r.body.error).toMatch(/^API keys and platform credentials are not accepted on \/app\/api/);
      }
    }
    // Without a session the account routes are 401.
    expect((await call('GET', '/app/api/account/passkeys')).status).toBe(401);
    expect((await call('GET', '/app/api/account/passkeys', { cookie })).status).toBe(200);
  });
});
