// Every way into the web console, in a real Chromium against the real stack
// (issue 27): password then TOTP, a passkey (Chromium's virtual authenticator
// over CDP), single sign-on through the loopback OIDC provider, the mailed
// invitation and password-reset links, sign-out; a page of another origin
// whose POST carries the session cookie is refused by the Origin rule with
// nothing changed; axe-clean pages, no CSP violation, nothing fetched from
// another origin.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as OTPAuth from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { axeViolations, launchBrowser, openConsole, PHONE, screenshot, signInThroughUi, skipWithoutChromium, startConsoleStack, type ConsoleStack, type ConsoleTab } from './support/browser.js';
import { consoleUser, setPassword } from './support/console.js';
import { startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';
import { platformToken } from './support/stack.js';

const PASSWORD = 'correct horse battery staple';

describe.skipIf(skipWithoutChromium('console-auth'))('signing in to the console in Chromium', { timeout: 60_000 }, () => {
  let stack: ConsoleStack;
  let browser: Browser;
  let admin: string;
  let idp: TestOidcProvider;
  const tabs: ConsoleTab[] = [];

  beforeAll(async () => {
    // Every page of the file signs in from one address: the per-address sign-in limiter (10 a minute) is not under test here.
    [stack, browser] = await Promise.all([startConsoleStack({ settings: { SERVICE_RATELIMIT_LOGIN_PER_MINUTE: '1000' } }), launchBrowser()]);
    admin = await platformToken(stack);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await idp?.close();
  });

  /** A tab that the test's end checks for CSP violations, page errors and foreign requests. */
  async function open(path: string, viewport?: { width: number; height: number }) {
    const tab = await openConsole(browser, stack, path, viewport ? { viewport } : {});
    tabs.push(tab);
    return tab;
  }
  const clean = (tab: ConsoleTab) => {
    expect(tab.errors).toEqual([]);
    expect(tab.foreignRequests).toEqual([]);
  };
  /** The token of the newest system mail to `address` (a reset's mail is written after the answer: waited for). */
  const mailedToken = async (address: string, path: string) => {
    const newest = async () => (await stack.sql.query(
      `SELECT m.text FROM emails e JOIN outbound_messages m ON m.id = e.message_id WHERE lower(e.recipient) = lower($1) AND m.origin = 'system' ORDER BY m.created_at DESC LIMIT 1`, [address])).rows[0]?.text as string | undefined;
    await expect.poll(newest, { message: `no mail to ${address}`, timeout: 10_000 }).toBeDefined();
    return new RegExp(`${path}#token=([A-Za-z0-9_-]+)`).exec((await newest())!)![1]!;
  };
  const sessionOf = async (page: Page) => (await page.context().cookies()).find((c) => c.name === stack.sessionCookieName);
  const shellShows = (page: Page) => page.getByRole('button', { name: 'Sign out' }).waitFor();

  test('password, then the TOTP code the page asks for', async () => {
    const tenant = await consoleUser(stack, admin, PASSWORD, 'totp');
    // Two-factor on, through the API, as the account page will do it.
    const signedIn = await stack.call('POST', '/app/api/session', { headers: { origin: stack.origin }, body: { email: tenant.user.email, password: PASSWORD } });
    const cookie = `${stack.sessionCookieName}=${(await sessionCookieValue(signedIn.headers.get('set-cookie')))}`;
    const started = await stack.call('POST', '/app/api/account/totp', { headers: { cookie, origin: stack.origin } });
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(started.body.secret) });
    expect((await stack.call('POST', '/app/api/account/totp/confirm', { headers: { cookie, origin: stack.origin }, body: { code: totp.generate({ timestamp: Date.now() - 30_000 }) } })).status).toBe(200);

    const tab = await open('/');
    const { page } = tab;
    await page.getByLabel('Email').fill(tenant.user.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const code = page.getByLabel('Code from your authenticator app');
    await code.waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in-totp');
    // A wrong code: the API's refusal, next to the form, and still on the second step.
    await code.fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 }).toContain('invalid two-factor code');
    await code.fill(totp.generate());
    await page.getByRole('button', { name: 'Verify' }).click();
    await shellShows(page);
    expect(await page.getByRole('combobox', { name: 'Project' }).inputValue()).toBe(tenant.project.id);
    clean(tab);
  });

  test('a passkey registered in this browser signs in with no password', async () => {
    const tenant = await consoleUser(stack, admin, PASSWORD, 'passkey');
    const tab = await open('/sign-in');
    const { page } = tab;
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
    // Registered by the page's own fetch with its session (the account pages' ceremony).
    expect(await page.evaluate(registerPasskey, 'laptop')).toBe(201);
    // Signing out ends the session on the server too, not only in this browser.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await sessionOf(page)).toBeUndefined();
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [tenant.user.id])).rows[0].n).toBe(0);

    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await shellShows(page);
    const me = await page.evaluate(async () => (await fetch('/app/api/session')).json());
    expect(me.session.method).toBe('passkey');
    expect(me.user.id).toBe(tenant.user.id);
    clean(tab);
  });

  test('single sign-on: the provider\'s button, its login, and back signed in where the person was going', async () => {
    const port = (await stack.call('GET', '/health')).status === 200 ? new URL(stack.origin).port : '';
    idp = await startOidcProvider({
      clients: [{ client_id: 'console', client_secret: 'a throwaway client secret', redirect_uris: [`http://localhost:${port}/app/api/session/oidc/callback`] }],
      accounts: [{ sub: 'bob-1', email: 'bob@sso.example', name: 'Bob' }],
    });
    const tenant = await consoleUser(stack, admin, PASSWORD, 'sso');
    const created = await stack.call('POST', '/api/v1/admin/identity-providers', {
      token: admin,
      body: { name: 'Acme SSO', issuer: idp.issuer, client_id: 'console', client_secret: 'a throwaway client secret', allowed_domains: ['sso.example'], default_project_id: tenant.project.id, default_role: 'member' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    const tab = await open('/domains');
    const { page } = tab;
    // The provider's login is scripted (no form): the browser names the test account on the interaction requests.
    // (Every request of this tab carries it; a route handler would miss the provider's redirects.)
    await page.setExtraHTTPHeaders({ 'x-test-login-as': 'bob-1' });
    await page.getByRole('link', { name: 'Sign in with Acme SSO' }).click();
    await page.getByRole('heading', { name: 'Domains', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/domains');
    const me = await page.evaluate(async () => (await fetch('/app/api/session')).json());
    expect([me.session.method, me.user.email]).toEqual(['oidc', 'bob@sso.example']);
    // The provider is the one origin besides ours the browser went to: by navigation, as the flow requires.
    tab.foreignRequests.splice(0, tab.foreignRequests.length, ...tab.foreignRequests.filter((u) => !u.startsWith(idp.issuer)));
    clean(tab);
  });

  test('the invitation link: a new person chooses a password, joins, signs in', async () => {
    const tenant = await consoleUser(stack, admin, PASSWORD, 'invite');
    const invited = await stack.call('POST', '/api/v1/invitations', { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id }, body: { email: 'newcomer@invite.example' } });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    const token = await mailedToken('newcomer@invite.example', '/app/invitation');

    const tab = await open(`/app/invitation#token=${token}`, PHONE);
    const { page } = tab;
    await page.getByRole('heading', { name: 'Join the project' }).waitFor();
    // The token leaves the address bar at once.
    expect(page.url()).not.toContain(token);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'invitation-phone');
    await page.getByLabel('Your name').fill('Newcomer');
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Accept the invitation' }).click();
    // The API's field error, next to the field it names; the link still works.
    await expect.poll(() => page.locator('.field-invalid .field-error').textContent(), { timeout: 10_000 }).toMatch(/\S/);
    await page.getByLabel('Password').fill('a newcomer password');
    await page.getByRole('button', { name: 'Accept the invitation' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await signInThroughUi(page, { email: 'newcomer@invite.example', password: 'a newcomer password' });
    await page.getByRole('button', { name: 'Menu' }).click();
    expect(await page.getByRole('combobox', { name: 'Project' }).inputValue()).toBe(tenant.project.id);
    clean(tab);
  });

  test('forgot the password: the mailed link sets a new one, every session signed out', async () => {
    const tenant = await consoleUser(stack, admin, PASSWORD, 'reset');
    const tab = await open('/sign-in');
    const { page } = tab;
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel('Email').fill(tenant.user.email);
    await page.getByRole('button', { name: 'Mail me a link' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'on its way' }).count(), { timeout: 10_000 }).toBe(1);
    const token = await mailedToken(tenant.user.email, '/app/password-reset');

    // The mail's link, opened as a new page load (the same path with another #fragment would not reload).
    await page.goto('about:blank');
    await page.goto(`${stack.origin}/app/password-reset#token=${token}`);
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    expect(page.url()).not.toContain(token);
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel('New password').fill('a brand new password');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await page.getByText('Your password is changed').waitFor();
    await signInThroughUi(page, { email: tenant.user.email, password: 'a brand new password' });
    clean(tab);
  });

  test('the project picker moves the session to another of the person\'s projects', async () => {
    const tenant = await consoleUser(stack, admin, PASSWORD, 'picker');
    const second = await stack.call('POST', '/api/v1/admin/projects', { token: admin, body: { name: 'second shop', owner_id: tenant.user.id } });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    const tab = await open('/sign-in');
    const { page } = tab;
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
    const picker = page.getByRole('combobox', { name: 'Project' });
    expect(await picker.inputValue()).toBe(tenant.project.id);
    await picker.selectOption({ label: 'second shop' });
    await expect.poll(async () => (await page.evaluate(async () => (await fetch('/app/api/session')).json())).session.current_project_id, { timeout: 10_000 }).toBe(second.body.project.id);
    expect(await picker.inputValue()).toBe(second.body.project.id);
    expect(await axeViolations(page)).toEqual([]);
    clean(tab);
  });

  test('a page of another origin posting with the session cookie is refused; the session goes on', async () => {
    const tenant = await consoleUser(stack, admin, PASSWORD, 'csrf');
    const tab = await open('/sign-in');
    const { page } = tab;
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
    const before = await stack.sql.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [tenant.user.id]);

    // http://localhost:<another port> is another origin but the same site, so the SameSite=Strict
    // cookie does ride along: only the Origin rule stands between this page and sign-out-all.
    const attacker = await foreignPage(`<!doctype html><title>evil</title><script>
      fetch(${JSON.stringify(`${stack.origin}/app/api/session/sign-out-all`)}, { method: 'POST', mode: 'no-cors', credentials: 'include' });
    </script>`);
    try {
      const evil = await page.context().newPage();
      const answer = evil.waitForResponse((r) => r.url().endsWith('/app/api/session/sign-out-all'));
      await evil.goto(attacker.url);
      expect((await answer).status()).toBe(403);
      await evil.close();
    } finally {
      await attacker.close();
    }
    const after = await stack.sql.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [tenant.user.id]);
    expect(after.rows[0].n).toBe(before.rows[0].n);
    await page.reload();
    await shellShows(page);
    clean(tab);
  });
});

/** The value of the session cookie in a Set-Cookie header. */
function sessionCookieValue(setCookie: string | null): string {
  const m = /^[^=]+=([^;]+)/.exec(setCookie ?? '');
  if (!m) throw new Error(`no cookie in ${setCookie}`);
  return m[1]!;
}

/** An HTML page served from http://localhost:<a port of its own>. */
async function foreignPage(html: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://localhost:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * Runs in the page: the passkey registration ceremony with the page's session
 * (options, navigator.credentials.create(), the answer as JSON); the status of the answer.
 */
async function registerPasskey(name: string): Promise<number> {
  const b64 = (buf: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const bytes = (s: string) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(s.length / 4) * 4, '=')), (c) => c.charCodeAt(0));
  const options = await (await fetch('/app/api/account/passkeys/registration-options', { method: 'POST' })).json();
  const credential = await navigator.credentials.create({
    publicKey: { ...options, challenge: bytes(options.challenge), user: { ...options.user, id: bytes(options.user.id) }, excludeCredentials: [] },
  }) as PublicKeyCredential;
  const r = credential.response as AuthenticatorAttestationResponse;
  const response = {
    id: credential.id, rawId: b64(credential.rawId), type: 'public-key', clientExtensionResults: credential.getClientExtensionResults(),
    response: { clientDataJSON: b64(r.clientDataJSON), attestationObject: b64(r.attestationObject), transports: r.getTransports() },
  };
  const answer = await fetch('/app/api/account/passkeys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, response }) });
  return answer.status;
}
