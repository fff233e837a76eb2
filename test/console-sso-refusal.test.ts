// A refused single sign-on, as a person meets it (issue 27): the callback is a
// browser navigation, so a refusal sends the browser to the console's sign-in
// page (`/sign-in#sso_error=<code>`), which says what went wrong in its own
// words, never echoing what the provider or the link said. An API client that
// does not ask for HTML keeps the JSON answers (docs/sso.md).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchBrowser, openConsole, signInThroughUi, skipWithoutChromium, startConsoleStack, type ConsoleStack, type ConsoleTab } from './support/browser.js';
import { consoleUser } from './support/console.js';
import { startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';
import { platformToken } from './support/stack.js';

const PASSWORD = 'correct horse battery staple';
const CALLBACK = '/app/api/session/oidc/callback';

describe.skipIf(skipWithoutChromium('console-sso-refusal'))('a refused single sign-on in Chromium', { timeout: 60_000 }, () => {
  let stack: ConsoleStack;
  let browser: Browser;
  let idp: TestOidcProvider;
  let admin: string;
  const tabs: ConsoleTab[] = [];

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startConsoleStack({ settings: { SERVICE_RATELIMIT_LOGIN_PER_MINUTE: '1000' } }), launchBrowser()]);
    idp = await startOidcProvider({
      clients: [{ client_id: 'console', client_secret: 'a throwaway client secret', redirect_uris: [`${stack.origin}${CALLBACK}`] }],
      accounts: [
        { sub: 'eve-1', email: 'eve@elsewhere.example', name: 'Eve' },
        { sub: 'uma-1', email: 'uma@sso.example', email_verified: false, name: 'Uma' },
        { sub: 'bob-1', email: 'bob@sso.example', name: 'Bob' },
      ],
    });
    admin = await platformToken(stack);
    const tenant = await consoleUser(stack, admin, PASSWORD, 'sso');
    const created = await stack.call('POST', '/api/v1/admin/identity-providers', {
      token: admin,
      body: { name: 'Acme SSO', issuer: idp.issuer, client_id: 'console', client_secret: 'a throwaway client secret', allowed_domains: ['sso.example'], default_project_id: tenant.project.id, default_role: 'member' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }, 60_000);
  afterAll(async () => {
    for (const tab of tabs) await tab.context.close();
    await browser?.close();
    await stack?.stop();
    await idp?.close();
  });

  const users = async () => (await stack.sql.query('SELECT count(*)::int AS n FROM users')).rows[0].n as number;
  const sessions = async () => (await stack.sql.query('SELECT count(*)::int AS n FROM sessions')).rows[0].n as number;

  /** Signs in through the provider as `sub` (or the provider refuses: `deny`), from the sign-in page, and answers the tab. */
  async function ssoAs(sub: string, deny = false) {
    const tab = await openConsole(browser, stack, '/sign-in');
    tabs.push(tab);
    await tab.page.setExtraHTTPHeaders(deny ? { 'x-test-deny': '1' } : { 'x-test-login-as': sub });
    await tab.page.getByRole('link', { name: 'Sign in with Acme SSO' }).click();
    return tab;
  }
  /** The sign-in page, showing `message` as its alert; the code gone from the address bar; no session. */
  async function landsOnSignIn(tab: ConsoleTab, message: RegExp) {
    const { page } = tab;
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(message);
    const url = new URL(page.url());
    expect([url.origin, url.pathname, url.hash]).toEqual([stack.origin, '/sign-in', '']);
    expect((await page.context().cookies()).find((c) => c.name === stack.sessionCookieName)).toBeUndefined();
    // Only the provider besides ours, by navigation; no error but the 4xx notes the page makes itself.
    expect(tab.foreignRequests.filter((u) => !u.startsWith(idp.issuer))).toEqual([]);
    expect(tab.errors).toEqual([]);
  }

  test('an email domain the provider does not allow: the sign-in page says so, nobody is created or signed in', async () => {
    const [before, sessionsBefore] = [await users(), await sessions()];
    const tab = await ssoAs('eve-1');
    await landsOnSignIn(tab, /domain may not sign in through this identity provider/);
    expect(await tab.page.content()).not.toContain('elsewhere.example');
    expect([await users(), await sessions()]).toEqual([before, sessionsBefore]);
  });

  test('an unverified email, and the provider refusing: each named in the page\'s words, not the provider\'s', async () => {
    await landsOnSignIn(await ssoAs('uma-1'), /has not verified your email address/);
    const denied = await ssoAs('uma-1', true);
    await landsOnSignIn(denied, /The identity provider did not sign you in/);
    expect(await denied.page.content()).not.toMatch(/access_denied/);
  });

  test('a crafted callback link (unknown state, text of the attacker\'s): the sign-in page, nothing of the link on it, no script', async () => {
    const tab = await openConsole(browser, stack, '/sign-in');
    tabs.push(tab);
    const evil = '<img src=x onerror="document.title=\'pwned\'">';
    await tab.page.goto(tab.url(`${CALLBACK}?state=${encodeURIComponent(evil)}&error=access_denied&error_description=${encodeURIComponent(evil)}`));
    await landsOnSignIn(tab, /That sign-in had expired, was used already, or was started in another browser/);
    expect(await tab.page.content()).not.toContain('onerror');
    expect(await tab.page.title()).not.toBe('pwned');
    // A code the console does not know, or markup in its place: a plain "failed", nothing of it shown.
    const other = await openConsole(browser, stack, `/sign-in#sso_error=${encodeURIComponent(evil)}`);
    tabs.push(other);
    await landsOnSignIn(other, /^Single sign-on failed\. Try again, or sign in another way\.$/);
    expect(await other.page.content()).not.toContain('onerror');
  });

  test('a link refused (the identity is another account\'s): back on the account page, which says so; nothing linked', async () => {
    // Bob's first sign-in makes his account, linked to the identity.
    const bob = await ssoAs('bob-1');
    await bob.page.getByRole('button', { name: 'Sign out' }).waitFor();
    // Ann, signed in with her password, links the same identity from her account page.
    const ann = await consoleUser(stack, admin, PASSWORD, 'ann');
    const tab = await openConsole(browser, stack, '/account');
    tabs.push(tab);
    await signInThroughUi(tab.page, { email: ann.user.email, password: PASSWORD });
    await tab.page.setExtraHTTPHeaders({ 'x-test-login-as': 'bob-1' });
    await tab.page.getByRole('button', { name: 'Link provider' }).click();
    await tab.page.getByRole('alert').filter({ hasText: 'That identity is already linked to another account.' }).waitFor();
    const url = new URL(tab.page.url());
    expect([url.pathname, url.hash]).toEqual(['/account', '']);
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM user_identities WHERE user_id = $1', [ann.user.id])).rows[0].n).toBe(0);
    expect(tab.errors).toEqual([]);
  });

  test('an API client that does not ask for HTML keeps the JSON refusal; a browser\'s request gets the redirect', async () => {
    for (const accept of [undefined, 'application/json']) {
      const r = await fetch(`${stack.url}${CALLBACK}?state=nope&code=x`, { redirect: 'manual', headers: accept ? { accept } : {} });
      expect(r.status).toBe(401);
      expect((await r.json()).error).toMatch(/^single sign-on failed: unknown, expired or already used sign-in/);
    }
    const page = await fetch(`${stack.url}${CALLBACK}?state=nope&code=x`, { redirect: 'manual', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/sign-in#sso_error=state');
    expect(page.headers.get('cache-control')).toBe('no-store');
  });
});
