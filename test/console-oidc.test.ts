// OIDC single sign-on (docs/sso.md) against a real OpenID Connect provider on
// loopback (test/support/oidc-provider.ts: the `oidc-provider` package with a
// throwaway signing key). The browser is played by hand: the start route's
// redirect and binding cookie, the provider's login and consent, the
// callback. A first sign-in creates the user in the default project, a later
// one finds them again, an existing account with a password is not linked by
// email (test/console-oidc-linking.test.ts has the rest of that rule); every
// refusal (state, binding, provider error, audience, issuer, nonce, expiry,
// signature, unverified email, allowlist) signs nobody in, creates nobody and
// leaves its audit event; the callback has its own rate limit.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, startTestStack, type SeededProject, type TestStack } from './support/stack.js';
import { cookieOf, setPassword } from './support/console.js';
import { startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';
import { awayFromWindowEdge } from './support/wait.js';

const PUBLIC_URL = 'https://console.example.test';
const REDIRECT_URI = `${PUBLIC_URL}/app/api/session/oidc/callback`;
const CLIENT = { client_id: 'edgemail-console', client_secret: 'a throwaway client secret', redirect_uris: [REDIRECT_URI] };
const OIDC_PER_MINUTE = 40;
const ACCOUNTS = [
  { sub: 'bob-1', email: 'bob@acme.example', name: 'Bob' },
  { sub: 'ada-1', email: 'Ada@Acme.example', name: 'Ada' },
  { sub: 'eve-1', email: 'eve@evil.example' },
  { sub: 'unverified-1', email: 'carl@acme.example', email_verified: false },
  { sub: 'dan-1', email: 'dan@acme.example' },
];

let stack: TestStack;
let admin: string;
let idp: TestOidcProvider;
let tenant: SeededProject;
let providerId: string;
let addresses = 0;
/** A client address of its own per request, so only the rate-limit test meets the limiter. */
const freshAddress = () => `198.51.100.${++addresses}`;

beforeAll(async () => {
  idp = await startOidcProvider({ clients: [CLIENT], accounts: ACCOUNTS });
  stack = await startTestStack({ settings: { SERVICE_SERVER_PUBLIC_URL: PUBLIC_URL, SERVICE_RATELIMIT_OIDC_PER_MINUTE: String(OIDC_PER_MINUTE) } });
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin, 'acme');
  providerId = await addProvider({ name: 'Acme SSO', issuer: idp.issuer });
});
afterAll(async () => {
  await stack?.stop();
  await idp?.close();
});

async function addProvider(fields: Record<string, unknown>): Promise<string> {
  const r = await stack.call('POST', '/api/v1/admin/identity-providers', {
    token: admin,
    body: { client_id: CLIENT.client_id, client_secret: CLIENT.client_secret, allowed_domains: ['acme.example'], default_project_id: tenant.project.id, default_role: 'member', ...fields },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.identity_provider.id;
}

/** GET /start as a browser navigation: the provider's URL and the binding cookie. */
async function start(provider = providerId, returnTo?: string, ip = freshAddress()) {
  const query = returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`;
  const r = await stack.call('GET', `/app/api/session/oidc/${provider}/start${query}`, { headers: { 'cf-connecting-ip': ip } });
  return { ...r, location: r.headers.get('location') ?? '', binding: r.headers.get('set-cookie')?.split(';')[0] ?? '' };
}

function callback(search: string, binding: string | undefined, ip = freshAddress()) {
  return stack.call('GET', `/app/api/session/oidc/callback${search}`, { headers: { 'cf-connecting-ip': ip, ...(binding ? { cookie: binding } : {}) } });
}

/** The whole round trip for the account `sub`; `binding` changes the cookie the callback carries. */
async function signInAs(sub: string, o: { provider?: string; returnTo?: string; deny?: boolean; binding?: (b: string) => string | undefined } = {}) {
  const started = await start(o.provider, o.returnTo);
  expect(started.status, JSON.stringify(started.body)).toBe(302);
  const back = await (o.provider && o.provider !== providerId ? other : idp).authorize(started.location, sub, { deny: o.deny });
  expect(back.href.startsWith(REDIRECT_URI)).toBe(true);
  const r = await callback(back.search, o.binding ? o.binding(started.binding) : started.binding);
  return { ...r, search: back.search, binding: started.binding };
}

const userByEmail = async (email: string) =>
  (await stack.sql.query('SELECT id, email, email_verified_at, default_project_id, password_hash FROM users WHERE lower(email) = lower($1)', [email])).rows[0];
const countOf = async (table: string) => Number((await stack.sql.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n);
const lastEvent = async (type: string) =>
  (await stack.sql.query(`SELECT type, detail, status, actor_id, actor_email FROM audit_events WHERE category = 'security' AND type = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, [type])).rows[0];

let other: TestOidcProvider;

describe('signing in', () => {
  test('the start redirects to the provider with PKCE, state and nonce, and sets a Lax binding cookie', async () => {
    const r = await start();
    expect(r.status).toBe(302);
    const url = new URL(r.location);
    expect(url.origin).toBe(idp.issuer);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code', client_id: CLIENT.client_id, redirect_uri: REDIRECT_URI, scope: 'openid email profile', code_challenge_method: 'S256',
    });
    for (const p of ['state', 'nonce', 'code_challenge']) expect(url.searchParams.get(p)?.length).toBeGreaterThanOrEqual(40);
    const cookie = r.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^edgemail_oidc=[\w-]{40,}; Path=\/app\/api\/session\/oidc; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
    // Only the state's hash is kept.
    const { rows } = await stack.sql.query(`SELECT key_hash, data FROM auth_challenges WHERE purpose = 'oidc'`);
    expect(rows.some((row) => row.key_hash === url.searchParams.get('state') || row.data.includes(url.searchParams.get('state')!))).toBe(false);
  });

  test('a first sign-in creates the user, verified, member of the default project; the session is an oidc one there', async () => {
    const r = await signInAs('bob-1');
    expect(r.status, JSON.stringify(r.body)).toBe(303);
    expect(r.headers.get('location')).toBe('/');
    const setCookies = r.headers.getSetCookie();
    expect(setCookies.some((c) => c.startsWith('edgemail_oidc=; Path=/app/api/session/oidc; Max-Age=0'))).toBe(true);
    const cookie = cookieOf(setCookies.find((c) => c.startsWith('__Host-edgemail_session=')) ?? null);

    const me = await stack.call('GET', '/app/api/session', { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ user: { email: 'bob@acme.example', email_verified: true, default_project_id: tenant.project.id }, session: { method: 'oidc', current_project_id: tenant.project.id } });
    const bob = await userByEmail('bob@acme.example');
    expect(bob.password_hash).toBeNull();
    const { rows: member } = await stack.sql.query('SELECT role FROM memberships WHERE project_id = $1 AND user_id = $2', [tenant.project.id, bob.id]);
    expect(member).toEqual([{ role: 'member' }]);
    expect(await lastEvent('auth.oidc.login')).toMatchObject({ actor_id: bob.id, actor_email: 'bob@acme.example', status: 200, detail: `provider=${providerId} created` });
    // The session works on /api/v1 as the member it is.
    const domains = await stack.call('GET', '/api/v1/domains', { headers: { cookie, origin: PUBLIC_URL } });
    expect(domains.status, JSON.stringify(domains.body)).toBe(200);

    // Again: the same user, nothing new, and the return path of the start.
    const users = await countOf('users');
    const again = await signInAs('bob-1', { returnTo: '/projects?tab=mail' });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('/projects?tab=mail');
    expect(await countOf('users')).toBe(users);
    expect(await lastEvent('auth.oidc.login')).toMatchObject({ actor_id: bob.id, detail: `provider=${providerId}` });
  });

  test('an existing account with the same email and a password is not linked: 409 naming what to do (docs/sso.md "Accounts")', async () => {
    const ada = await seedProject(stack, admin, 'ada-own');
    await stack.sql.query(`UPDATE users SET email = 'ada@acme.example', password_locked_until = now() + interval '15 minutes' WHERE id = $1`, [ada.user.id]);
    await setPassword(stack.sql, ada.user.id, 'her own password');
    const r = await signInAs('ada-1');
    expect(r.status, JSON.stringify(r.body)).toBe(409);
    expect(r.body.error).toBe('an account with this email already exists: sign in to it another way and link Acme SSO from your account settings');
    expect(r.headers.getSetCookie().some((c) => /^(__Host-)?edgemail_session=/.test(c))).toBe(false);
    const { rows } = await stack.sql.query('SELECT user_id FROM user_identities WHERE subject = $1', ['ada-1']);
    expect(rows).toEqual([]);
    expect(await lastEvent('auth.oidc.denied')).toMatchObject({ actor_id: ada.user.id, status: 409, detail: `provider=${providerId} reason=link_required` });
    // Not added to the provider's default project either.
    const { rows: member } = await stack.sql.query('SELECT 1 FROM memberships WHERE project_id = $1 AND user_id = $2', [tenant.project.id, ada.user.id]);
    expect(member).toHaveLength(0);
  });

  test('the providers a sign-in page offers: enabled ones, id and name only', async () => {
    const r = await stack.call('GET', '/app/api/session/oidc/providers');
    expect(r.status).toBe(200);
    expect(r.body.identity_providers).toContainEqual({ id: providerId, name: 'Acme SSO' });
    expect(Object.keys(r.body.identity_providers[0]).sort()).toEqual(['id', 'name']);
  });
});

describe('refusals: nobody signed in, nobody created, the trail says why', () => {
  test('an email outside the allowlist: 403 and auth.oidc.denied', async () => {
    const users = await countOf('users');
    const r = await signInAs('eve-1');
    expect(r).toMatchObject({ status: 403, body: { error: 'evil.example may not sign in through Acme SSO' } });
    expect(r.headers.getSetCookie().some((c) => /^(__Host-)?edgemail_session=/.test(c))).toBe(false);
    expect(await countOf('users')).toBe(users);
    expect(await lastEvent('auth.oidc.denied')).toMatchObject({ actor_id: null, actor_email: 'eve@evil.example', status: 403, detail: `provider=${providerId} domain=evil.example` });
  });

  test('an email the provider has not verified: 401', async () => {
    const r = await signInAs('unverified-1');
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('single sign-on failed: the identity provider has not verified carl@acme.example');
    expect(await userByEmail('carl@acme.example')).toBeUndefined();
    expect((await lastEvent('auth.login.failed')).detail).toBe(`oidc:email_unverified provider=${providerId}`);
  });

  test('state: altered, replayed, or the callback in another browser (no binding cookie, or another one)', async () => {
    const altered = await signInAs('dan-1', { binding: (b) => b });
    expect(altered.status).toBe(303); // the control: untouched, it works
    // A replay of the same callback URL: the state is spent.
    const replay = await callback(altered.search, altered.binding);
    expect(replay).toMatchObject({ status: 401, body: { error: 'single sign-on failed: unknown, expired or already used sign-in (state), or one started in another browser' } });
    expect((await lastEvent('auth.login.failed')).detail).toBe('oidc:state');

    for (const binding of [() => undefined, () => 'edgemail_oidc=someone-elses-binding-value-000000000000000']) {
      const r = await signInAs('dan-1', { binding });
      expect(r.status).toBe(401);
      expect(r.body.error).toMatch(/state/);
    }
    const started = await start();
    const back = await idp.authorize(started.location, 'dan-1');
    back.searchParams.set('state', back.searchParams.get('state')!.replace(/^./, (ch) => (ch === 'A' ? 'B' : 'A')));
    expect((await callback(back.search, started.binding)).status).toBe(401);
  });

  test('the provider says no (access_denied): 401 naming it', async () => {
    const r = await signInAs('dan-1', { deny: true });
    expect(r.status).toBe(401);
    expect(r.body.error).toMatch(/^single sign-on failed: the identity provider answered access_denied/);
    expect((await lastEvent('auth.login.failed')).detail).toBe(`oidc:provider_error provider=${providerId}`);
  });

  test.each([
    ['aud', (c: Record<string, unknown>) => ({ ...c, aud: 'another-client' })],
    ['iss', (c: Record<string, unknown>) => ({ ...c, iss: 'https://impostor.example' })],
    ['nonce', (c: Record<string, unknown>) => ({ ...c, nonce: 'not-the-nonce-we-sent' })],
    ['exp', (c: Record<string, unknown>) => ({ ...c, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 })],
  ])('an ID token with a wrong %s (validly signed): 401', async (claim, tamper) => {
    const users = await countOf('users');
    idp.tamperIdTokens(tamper);
    try {
      const r = await signInAs('dan-1');
      expect(r.status, JSON.stringify(r.body)).toBe(401);
      expect(r.body.error).toMatch(new RegExp(`^single sign-on failed: the identity provider's answer was refused \\(${claim}\\)`));
      expect((await lastEvent('auth.login.failed')).detail).toBe(`oidc:${claim} provider=${providerId}`);
    } finally {
      idp.tamperIdTokens(null);
    }
    expect(await countOf('users')).toBe(users);
  });

  test('an ID token whose signature the published JWKS does not verify: 401', async () => {
    // A provider of its own: the Worker keeps each issuer's JWKS once fetched.
    other = await startOidcProvider({ clients: [CLIENT], accounts: ACCOUNTS });
    try {
      other.serveForeignJwks(true);
      const otherId = await addProvider({ name: 'Impostor keys', issuer: other.issuer });
      const r = await signInAs('dan-1', { provider: otherId });
      expect(r.status, JSON.stringify(r.body)).toBe(401);
      expect((await lastEvent('auth.login.failed')).detail).toBe(`oidc:signature provider=${otherId}`);
      expect(other.hits('/jwks')).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });

  test('a disabled or unknown provider cannot be started; a bad return_to is refused', async () => {
    const off = await addProvider({ name: 'Switched off', issuer: idp.issuer, enabled: false });
    expect((await start(off)).status).toBe(404);
    expect((await start(crypto.randomUUID())).status).toBe(404);
    const providers = await stack.call('GET', '/app/api/session/oidc/providers');
    expect(providers.body.identity_providers.map((p: { id: string }) => p.id)).not.toContain(off);
    for (const returnTo of ['//evil.example/', '/\\evil.example', 'https://evil.example/', 'relative']) {
      const r = await start(providerId, returnTo);
      expect(r.status, returnTo).toBe(400);
      expect(JSON.stringify(r.body)).toContain('return_to must be a path on this site, starting with a single /');
    }
  });

  test('a provider disabled between start and callback: 401', async () => {
    const started = await start();
    const back = await idp.authorize(started.location, 'dan-1');
    await stack.sql.query('UPDATE identity_providers SET enabled = false WHERE id = $1', [providerId]);
    try {
      const r = await callback(back.search, started.binding);
      expect(r.status).toBe(401);
      expect((await lastEvent('auth.login.failed')).detail).toBe('oidc:provider');
    } finally {
      await stack.sql.query('UPDATE identity_providers SET enabled = true WHERE id = $1', [providerId]);
    }
  });

  test(`callbacks beyond ratelimit.oidc_per_minute (${OIDC_PER_MINUTE}) from one address: 429`, async () => {
    const ip = '192.0.2.77';
    await awayFromWindowEdge();
    const answers = [];
    for (let i = 0; i <= OIDC_PER_MINUTE; i++) answers.push((await callback(`?code=x&state=nothing-${i}`, undefined, ip)).status);
    expect(answers.slice(0, OIDC_PER_MINUTE).every((s) => s === 401)).toBe(true);
    expect(answers[OIDC_PER_MINUTE]).toBe(429);
    // Another address is not limited.
    expect((await callback('?code=x&state=nothing', undefined, freshAddress())).status).toBe(401);
  });
});
