// Who an identity provider may sign in as (docs/sso.md "Accounts"), against a
// real OpenID Connect provider on loopback (test/support/oidc-provider.ts).
// The attack: a provider whose allowed domains cover the victim's address
// signs in with it, and used to be linked to the victim's account, skipping
// the password and TOTP. Now an account with another way in is linked only
// from its own session (`POST /app/api/account/identities`); an account the
// provider itself made still links by email. And a session opened through a
// provider ends when the provider is disabled or deleted, on /api/v1, /app/api
// and the event stream alike.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, sessionCookie, startTestStack, type SeededProject, type TestStack } from './support/stack.js';
import { cookieOf, setPassword } from './support/console.js';
import { startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';
import { openSse } from './support/sse.js';

const PUBLIC_URL = 'https://console.example.test';
const REDIRECT_URI = `${PUBLIC_URL}/app/api/session/oidc/callback`;
const CLIENT = { client_id: 'edgemail-console', client_secret: 'a throwaway client secret', redirect_uris: [REDIRECT_URI] };
const ACCOUNTS = [
  { sub: 'victim-1', email: 'victim@acme.example', name: 'Not the victim' },
  { sub: 'carol-1', email: 'carol.work@acme.example' },
  { sub: 'zed-1', email: 'zed@acme.example' },
  { sub: 'pia-1', email: 'pia@acme.example' },
  { sub: 'bob-1', email: 'bob@acme.example' },
  { sub: 'sam-1', email: 'sam@acme.example' },
];

let stack: TestStack;
let admin: string;
let idp: TestOidcProvider;
let idpB: TestOidcProvider;
let tenant: SeededProject;
let providerA: string;
let providerB: string;
let addresses = 0;
const freshAddress = () => `198.51.100.${++addresses}`;

beforeAll(async () => {
  idp = await startOidcProvider({ clients: [CLIENT], accounts: ACCOUNTS });
  idpB = await startOidcProvider({ clients: [CLIENT], accounts: ACCOUNTS });
  stack = await startTestStack({ settings: { SERVICE_SERVER_PUBLIC_URL: PUBLIC_URL, SERVICE_CONSOLE_EVENTS_SESSION_CHECK: '500ms' } });
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin, 'acme');
  providerA = await addProvider('Acme SSO', idp.issuer);
  providerB = await addProvider('Other SSO', idpB.issuer);
});
afterAll(async () => {
  await stack?.stop();
  await idp?.close();
  await idpB?.close();
});

async function addProvider(name: string, issuer: string): Promise<string> {
  const r = await stack.call('POST', '/api/v1/admin/identity-providers', {
    token: admin,
    body: { name, issuer, client_id: CLIENT.client_id, client_secret: CLIENT.client_secret, allowed_domains: ['acme.example'], default_project_id: tenant.project.id, default_role: 'member' },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.identity_provider.id;
}

const idpOf = (provider: string) => (provider === providerB ? idpB : idp);
const browser = (cookie?: string) => ({ 'cf-connecting-ip': freshAddress(), ...(cookie ? { cookie } : {}) });
const withCookie = (cookie: string) => ({ cookie, origin: PUBLIC_URL });
const sessionCookieIn = (setCookies: string[]) => setCookies.find((c) => c.startsWith('__Host-edgemail_session='));

/** A whole provider sign-in (start, the provider, the callback) as `sub`. */
async function signInAs(sub: string, provider = providerA) {
  const started = await stack.call('GET', `/app/api/session/oidc/${provider}/start`, { headers: browser() });
  expect(started.status, JSON.stringify(started.body)).toBe(302);
  const back = await idpOf(provider).authorize(started.headers.get('location')!, sub);
  const binding = started.headers.get('set-cookie')!.split(';')[0]!;
  const r = await stack.call('GET', `/app/api/session/oidc/callback${back.search}`, { headers: browser(binding) });
  const session = sessionCookieIn(r.headers.getSetCookie());
  return { ...r, cookie: session ? cookieOf(session) : null };
}

/** Starts a link from `cookie`'s session; the answer, and the browser's binding cookie. */
function startLink(cookie: string, body: Record<string, unknown>) {
  return stack.call('POST', '/app/api/account/identities', { body, headers: { ...withCookie(cookie), 'cf-connecting-ip': freshAddress() } });
}

/** The whole link: start from the session, the provider as `sub`, the callback in the same browser. */
async function linkAs(cookie: string, sub: string, provider = providerA, returnTo?: string, beforeCallback?: () => Promise<unknown>) {
  const started = await startLink(cookie, { provider_id: provider, ...(returnTo ? { return_to: returnTo } : {}) });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const binding = started.headers.get('set-cookie')!.split(';')[0]!;
  expect(binding).toMatch(/^edgemail_oidc=/);
  const back = await idpOf(provider).authorize(started.body.authorization_url, sub);
  await beforeCallback?.();
  return stack.call('GET', `/app/api/session/oidc/callback${back.search}`, { headers: browser(binding) });
}

/** A user with a password (and, when asked, TOTP on) and the email given. */
async function securedUser(email: string, o: { totp?: boolean } = {}) {
  const seeded = await seedProject(stack, admin, email.split('@')[0]);
  await stack.sql.query('UPDATE users SET email = $2 WHERE id = $1', [seeded.user.id, email]);
  await setPassword(stack.sql, seeded.user.id, 'a password of their own');
  if (o.totp) await stack.sql.query(`UPDATE users SET totp_secret_sealed = 'sealed', totp_enabled_at = now() WHERE id = $1`, [seeded.user.id]);
  return seeded.user as { id: string; email: string };
}

const identitiesOf = async (userId: string) =>
  (await stack.sql.query('SELECT provider_id, subject FROM user_identities WHERE user_id = $1 ORDER BY created_at', [userId])).rows;
const identityBySubject = async (subject: string) =>
  (await stack.sql.query('SELECT user_id, provider_id FROM user_identities WHERE subject = $1', [subject])).rows;
const sessionCount = async (userId: string) => Number((await stack.sql.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [userId])).rows[0].n);
const lastEvent = async (type: string) =>
  (await stack.sql.query(`SELECT type, detail, status, actor_id, actor_email FROM audit_events WHERE category = 'security' AND type = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, [type])).rows[0];
const LINK_REQUIRED = 'an account with this email already exists: sign in to it another way and link Acme SSO from your account settings';

describe('the takeover by email is refused', () => {
  test('a provider signing in with the address of an account that has a password and TOTP: 409, nothing linked, nobody signed in', async () => {
    const victim = await securedUser('victim@acme.example', { totp: true });
    const sessions = await sessionCount(victim.id);
    const r = await signInAs('victim-1');
    expect(r).toMatchObject({ status: 409, body: { error: LINK_REQUIRED } });
    expect(r.cookie).toBeNull();
    expect(await identityBySubject('victim-1')).toEqual([]);
    expect(await sessionCount(victim.id)).toBe(sessions);
    // On the victim's own trail, with the reason.
    expect(await lastEvent('auth.oidc.denied')).toMatchObject({ actor_id: victim.id, actor_email: 'victim@acme.example', status: 409, detail: `provider=${providerA} reason=link_required` });
    // The victim's account is as it was: password still set, email not changed.
    const { rows } = await stack.sql.query('SELECT email, password_hash IS NOT NULL AS has_password, totp_enabled_at IS NOT NULL AS has_totp FROM users WHERE id = $1', [victim.id]);
    expect(rows).toEqual([{ email: 'victim@acme.example', has_password: true, has_totp: true }]);
  });

  test('a passkey alone is a way in too: refused', async () => {
    const { body: { user } } = await stack.call('POST', '/api/v1/admin/users', { token: admin, body: { email: 'pia@acme.example' } });
    await stack.sql.query(`INSERT INTO passkeys (user_id, name, credential_id, public_key) VALUES ($1, 'laptop', 'cred-pia', 'key')`, [user.id]);
    const r = await signInAs('pia-1');
    expect(r.status).toBe(409);
    expect(await identityBySubject('pia-1')).toEqual([]);
  });

  test('an account another provider made is not taken over by a second provider allowing the same domain', async () => {
    const first = await signInAs('sam-1', providerB);
    expect(first.status, JSON.stringify(first.body)).toBe(303);
    const [{ user_id: sam }] = await identityBySubject('sam-1');
    const r = await signInAs('sam-1', providerA);
    expect(r.status).toBe(409);
    expect(await identitiesOf(sam)).toEqual([{ provider_id: providerB, subject: 'sam-1' }]);
  });
});

describe('linking from the account\'s own session', () => {
  test('the victim links the provider from a fresh session; later provider sign-ins reach that account, lockout or not', async () => {
    const [{ id: victimId }] = (await stack.sql.query(`SELECT id FROM users WHERE email = 'victim@acme.example'`)).rows;
    const own = await sessionCookie(stack, victimId, 'password');
    const sessions = await sessionCount(victimId);
    const r = await linkAs(own, 'victim-1', providerA, '/settings/security');
    expect(r.status, JSON.stringify(r.body)).toBe(303);
    expect(r.headers.get('location')).toBe('/settings/security');
    // Linked, and no new session: the account's own one goes on.
    expect(sessionCookieIn(r.headers.getSetCookie())).toBeUndefined();
    expect(await sessionCount(victimId)).toBe(sessions);
    expect(await identitiesOf(victimId)).toEqual([{ provider_id: providerA, subject: 'victim-1' }]);
    expect(await lastEvent('auth.oidc.linked')).toMatchObject({ actor_id: victimId, status: 200, detail: `provider=${providerA}` });

    const listed = await stack.call('GET', '/app/api/account/identities', { headers: withCookie(own) });
    expect(listed.status).toBe(200);
    expect(listed.body.identities).toEqual([{ id: expect.any(String), provider_id: providerA, provider_name: 'Acme SSO', subject: 'victim-1', created_at: expect.any(String) }]);

    await stack.sql.query(`UPDATE users SET password_locked_until = now() + interval '15 minutes' WHERE id = $1`, [victimId]);
    const signIn = await signInAs('victim-1');
    expect(signIn.status, JSON.stringify(signIn.body)).toBe(303);
    const me = await stack.call('GET', '/app/api/session', { headers: withCookie(signIn.cookie!) });
    expect(me.body).toMatchObject({ user: { id: victimId, email: 'victim@acme.example' }, session: { method: 'oidc' } });
    const { rows } = await stack.sql.query('SELECT identity_provider_id FROM sessions WHERE user_id = $1 AND method = $2', [victimId, 'oidc']);
    expect(rows).toEqual([{ identity_provider_id: providerA }]);
  });

  test('the provider\'s email need not be the account\'s: the account\'s owner chose the link', async () => {
    const carol = await securedUser('carol@example.com');
    const r = await linkAs(await sessionCookie(stack, carol.id), 'carol-1');
    expect(r.status, JSON.stringify(r.body)).toBe(303);
    expect(await identitiesOf(carol.id)).toEqual([{ provider_id: providerA, subject: 'carol-1' }]);
    const again = await signInAs('carol-1');
    expect(again.status).toBe(303);
    const me = await stack.call('GET', '/app/api/session', { headers: withCookie(again.cookie!) });
    expect(me.body.user.id).toBe(carol.id);
  });

  test('refusals: an old session, an unknown provider, an identity that is another account\'s, a session ended meanwhile', async () => {
    const mallory = await securedUser('mallory@example.com');
    const old = await sessionCookie(stack, mallory.id);
    await stack.sql.query(`UPDATE sessions SET created_at = now() - interval '20 minutes' WHERE user_id = $1`, [mallory.id]);
    const stale = await startLink(old, { provider_id: providerA });
    expect(stale.status).toBe(403);
    expect(stale.body.error).toBe('sign in again to link an identity provider: this session signed in more than 15 minutes ago');
    expect(stale.headers.get('set-cookie')).toBeNull();

    const fresh = await sessionCookie(stack, mallory.id);
    expect((await startLink(fresh, { provider_id: crypto.randomUUID() })).status).toBe(404);
    expect((await startLink(fresh, { provider_id: providerA, return_to: '//evil.example/' })).status).toBe(400);

    // The victim's identity, already linked to the victim: mallory cannot take it.
    const taken = await linkAs(fresh, 'victim-1');
    expect(taken).toMatchObject({ status: 409, body: { error: 'this Acme SSO identity is already linked to another account' } });
    expect(await identitiesOf(mallory.id)).toEqual([]);
    expect(await lastEvent('auth.oidc.denied')).toMatchObject({ actor_id: mallory.id, detail: `provider=${providerA} reason=identity_taken` });

    // Signed out between the start and the callback: nothing linked.
    const ended = await linkAs(fresh, 'bob-1', providerA, undefined, () => stack.sql.query('DELETE FROM sessions WHERE user_id = $1', [mallory.id]));
    expect(ended.status).toBe(401);
    expect(ended.body.error).toMatch(/^the session that started linking Acme SSO has ended/);
    expect(await identityBySubject('bob-1')).toEqual([]);
  });

  test('unlinking: needs a recent sign-in, and never the last way in', async () => {
    const made = await signInAs('zed-1');
    expect(made.status).toBe(303);
    const [{ user_id: zed }] = await identityBySubject('zed-1');
    const { body: { identities: [link] } } = await stack.call('GET', '/app/api/account/identities', { headers: withCookie(made.cookie!) });
    const unlink = (cookie: string) => stack.call('DELETE', `/app/api/account/identities/${link.id}`, { headers: withCookie(cookie) });
    const last = await unlink(made.cookie!);
    expect(last.status).toBe(409);
    expect(last.body.error).toMatch(/^this is the last way to sign in to this account/);
    expect(await identitiesOf(zed)).toHaveLength(1);
    // Another user's link is not found.
    const stranger = await securedUser('stranger@example.com');
    expect((await unlink(await sessionCookie(stack, stranger.id))).status).toBe(404);

    await setPassword(stack.sql, zed, 'now a password');
    await stack.sql.query(`UPDATE sessions SET created_at = now() - interval '20 minutes' WHERE user_id = $1`, [zed]);
    expect((await unlink(made.cookie!)).status).toBe(403);
    expect((await unlink(await sessionCookie(stack, zed))).status).toBe(204);
    expect(await identitiesOf(zed)).toEqual([]);
  });
});

describe('an account the provider made links by email', () => {
  test('a user without password, TOTP or passkey (created by an admin, say) is linked on a first sign-in', async () => {
    const { body: { user } } = await stack.call('POST', '/api/v1/admin/users', { token: admin, body: { email: 'bob@acme.example' } });
    const r = await signInAs('bob-1');
    expect(r.status, JSON.stringify(r.body)).toBe(303);
    expect(await identityBySubject('bob-1')).toEqual([{ user_id: user.id, provider_id: providerA }]);
    expect(await lastEvent('auth.oidc.login')).toMatchObject({ actor_id: user.id, detail: `provider=${providerA}` });
  });
});

describe('sessions end with their provider', () => {
  const patchProvider = (id: string, enabled: boolean) => stack.call('PATCH', `/api/v1/admin/identity-providers/${id}`, { token: admin, body: { enabled } });
  const apiAnswer = async (cookie: string) => (await stack.call('GET', '/api/v1/domains', { headers: withCookie(cookie) })).status;
  const appAnswer = async (cookie: string) => (await stack.call('GET', '/app/api/session', { headers: withCookie(cookie) })).status;

  test('disabling a provider ends its sessions on /api/v1, /app/api and the event stream; enabling it again does not revive them', async () => {
    const viaB = await signInAs('sam-1', providerB);
    const viaA = await signInAs('carol-1', providerA);
    for (const cookie of [viaB.cookie!, viaA.cookie!]) expect([await apiAnswer(cookie), await appAnswer(cookie)]).toEqual([200, 200]);
    const stream = await openSse(`${stack.url}/app/api/events`, { cookie: viaB.cookie!, 'X-Service-Project-Id': tenant.project.id });
    expect(stream.status).toBe(200);

    expect((await patchProvider(providerB, false)).status).toBe(200);
    expect([await apiAnswer(viaB.cookie!), await appAnswer(viaB.cookie!)]).toEqual([401, 401]);
    await stream.ended;
    expect(stream.events.at(-1)?.event).toBe('end');
    // Another provider's session is untouched.
    expect([await apiAnswer(viaA.cookie!), await appAnswer(viaA.cookie!)]).toEqual([200, 200]);

    expect((await patchProvider(providerB, true)).status).toBe(200);
    expect(await appAnswer(viaB.cookie!)).toBe(401);
  });

  test('a session of a disabled provider is refused even before its row goes (the look-up checks the provider)', async () => {
    const viaB = await signInAs('sam-1', providerB);
    expect(await appAnswer(viaB.cookie!)).toBe(200);
    await stack.sql.query('UPDATE identity_providers SET enabled = false WHERE id = $1', [providerB]);
    try {
      expect([await apiAnswer(viaB.cookie!), await appAnswer(viaB.cookie!)]).toEqual([401, 401]);
    } finally {
      await stack.sql.query('UPDATE identity_providers SET enabled = true WHERE id = $1', [providerB]);
    }
    expect(await appAnswer(viaB.cookie!)).toBe(200);
  });

  test('deleting a provider ends its sessions', async () => {
    const viaB = await signInAs('sam-1', providerB);
    expect(await apiAnswer(viaB.cookie!)).toBe(200);
    expect((await stack.call('DELETE', `/api/v1/admin/identity-providers/${providerB}`, { token: admin })).status).toBe(204);
    expect([await apiAnswer(viaB.cookie!), await appAnswer(viaB.cookie!)]).toEqual([401, 401]);
    expect((await stack.sql.query('SELECT 1 FROM sessions WHERE identity_provider_id = $1', [providerB])).rows).toHaveLength(0);
  });
});
