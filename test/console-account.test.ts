// The account pages in a real Chromium against the real stack (issue 27):
// two-factor turned on from the page (QR drawn locally, recovery codes shown
// once) and then a password + code sign-in; a passkey made by Chromium's
// virtual authenticator (CDP WebAuthn), renamed and deleted; another session
// signed out from the list; a member invited from the members page and the
// invitation accepted on /app/invitation#token=…; axe on each page.
import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { axeViolations, PHONE, launchBrowser, openConsole, screenshot, signInThroughUi, skipWithoutChromium, startConsoleStack, type ConsoleStack } from './support/browser.js';
import { consoleUser, cookieOf, signIn, withSession } from './support/console.js';
import { platformToken } from './support/stack.js';

const PASSWORD = 'correct horse battery staple';
const STEP_MS = 30_000;
const codeAt = (secret: string, steps: number) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + steps * STEP_MS });

describe.skipIf(skipWithoutChromium('console-account'))('console account pages in Chromium', () => {
  let stack: ConsoleStack;
  let browser: Browser;
  let admin: string;
  let tenant: Awaited<ReturnType<typeof consoleUser>>;
  beforeAll(async () => {
    [stack, browser] = await Promise.all([startConsoleStack({ settings: { SERVICE_RATELIMIT_LOGIN_PER_MINUTE: '1000' } }), launchBrowser()]);
    admin = await platformToken(stack);
  });
  // Each test its own owner and project, so one test's state (two-factor on) never reaches another.
  beforeEach(async () => { tenant = await consoleUser(stack, admin, PASSWORD, 'acme'); });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  }, 90_000);

  test('two-factor: turned on from the account page, recovery codes shown once, then sign-in asks for the code', async () => {
    const tab = await openConsole(browser, stack, '/account');
    const { page } = tab;
    page.setDefaultTimeout(20_000);
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Two-factor authentication' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'account');

    await page.getByRole('button', { name: 'Turn on two-factor' }).click();
    // The QR code is an SVG drawn in the page (no request anywhere); the secret is typed from the text beside it.
    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    await qr.waitFor();
    expect(await qr.evaluate((el) => el.tagName.toLowerCase())).toBe('svg');
    const secret = (await page.locator('p', { hasText: 'Secret:' }).locator('code').textContent())!.trim();
    expect(secret).toMatch(/^[A-Z2-7]+=*$/);
    expect(await axeViolations(page)).toEqual([]);

    // A wrong code: the API's message next to the field, still off.
    await page.getByLabel('Code from your app').fill('000000');
    await page.getByRole('button', { name: 'Confirm and turn on' }).click();
    await page.locator('.field-error, .form-error').first().waitFor();
    expect((await stack.sql.query('SELECT totp_enabled_at IS NOT NULL AS on FROM users WHERE id = $1', [tenant.user.id])).rows[0].on).toBe(false);

    await page.getByLabel('Code from your app').fill(codeAt(secret, 0));
    await page.getByRole('button', { name: 'Confirm and turn on' }).click();
    const codes = page.getByRole('group', { name: 'Recovery codes' }).getByRole('listitem');
    await codes.first().waitFor();
    expect(await codes.count()).toBe(10);
    expect(await page.evaluate(() => localStorage.length + sessionStorage.length)).toBe(0);
    await screenshot(page, 'account-recovery-codes');
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByRole('group', { name: 'Recovery codes' }).waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(secret);
    await page.getByRole('button', { name: 'Turn off two-factor' }).waitFor();

    // A new browser: the password alone is not enough; the next step's code signs in.
    const again = await openConsole(browser, stack, '/account');
    again.page.setDefaultTimeout(20_000);
    await signInThroughUi(again.page, { email: tenant.user.email, password: PASSWORD, totpCode: () => codeAt(secret, 1) });
    await again.page.getByRole('heading', { name: 'Two-factor authentication' }).waitFor();
    expect(await again.page.getByText('A password sign-in also asks for a code').count()).toBe(1);
    for (const t of [tab, again]) {
      expect(t.foreignRequests).toEqual([]);
      expect(t.errors).toEqual([]);
    }
    await again.context.close();

    // Turned off again with the password, from the first browser.
    await page.getByRole('button', { name: 'Turn off two-factor' }).click();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Turn off', exact: true }).click();
    await page.getByRole('button', { name: 'Turn on two-factor' }).waitFor();
    await tab.context.close();
  }, 90_000);

  test('a passkey made by Chromium\'s virtual authenticator is added, renamed and deleted', async () => {
    const tab = await openConsole(browser, stack, '/account');
    const { page } = tab;
    page.setDefaultTimeout(20_000);
    const cdp = await tab.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', { options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true } });
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
    await page.getByRole('heading', { name: 'Passkeys', exact: true }).waitFor();
    await page.getByText('No passkeys yet').waitFor();

    // A session signed in 20 minutes ago may not add one: the API's refusal on the page, nothing stored.
    await stack.sql.query(`UPDATE sessions SET created_at = now() - interval '20 minutes' WHERE user_id = $1`, [tenant.user.id]);
    await page.getByLabel('Passkey name').fill('Stolen laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('alert').filter({ hasText: 'sign in again to' }).waitFor();
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM passkeys WHERE user_id = $1', [tenant.user.id])).rows[0].n).toBe(0);
    await stack.sql.query(`UPDATE sessions SET created_at = now() WHERE user_id = $1`, [tenant.user.id]);

    await page.getByLabel('Passkey name').fill('Work laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('cell', { name: 'Work laptop', exact: true }).waitFor();
    const { rows } = await stack.sql.query('SELECT name FROM passkeys WHERE user_id = $1', [tenant.user.id]);
    expect(rows).toEqual([{ name: 'Work laptop' }]);

    await page.getByRole('button', { name: 'Rename Work laptop' }).click();
    await page.getByLabel('New name').fill('Travel laptop');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('cell', { name: 'Travel laptop', exact: true }).waitFor();
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Delete Travel laptop' }).click();
    await page.getByRole('button', { name: 'Delete passkey' }).click();
    await page.getByText('No passkeys yet').waitFor();
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM passkeys WHERE user_id = $1', [tenant.user.id])).rows[0].n).toBe(0);
    // At a phone's width the page still passes axe.
    await page.setViewportSize(PHONE);
    await page.getByRole('heading', { name: 'Sessions' }).scrollIntoViewIfNeeded();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'account-phone');
    expect(tab.foreignRequests).toEqual([]);
    expect(tab.errors).toEqual([]);
    await tab.context.close();
  }, 90_000);

  test('another session is signed out from the sessions list; this one stays', async () => {
    const other = cookieOf((await signIn(stack, { email: tenant.user.email, password: PASSWORD }, '203.0.113.9')).headers.get('set-cookie'));
    expect((await stack.call('GET', '/app/api/session', { headers: withSession(stack, other) })).status).toBe(200);

    const tab = await openConsole(browser, stack, '/account');
    const { page } = tab;
    page.setDefaultTimeout(20_000);
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
    const sessions = page.getByRole('table', { name: 'Your signed-in sessions' });
    await sessions.getByRole('cell', { name: '203.0.113.9' }).first().waitFor();
    await page.getByRole('button', { name: /End session from 203\.0\.113\.9/ }).first().click();
    await page.getByText('Session ended: it is signed out').waitFor();
    expect((await stack.call('GET', '/app/api/session', { headers: withSession(stack, other) })).status).toBe(401);
    // This browser is still signed in.
    await page.reload();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    expect(await sessions.getByRole('cell', { name: '203.0.113.9' }).count()).toBe(0);
    expect(tab.errors).toEqual([]);
    await tab.context.close();
  }, 90_000);

  test('a member is invited from the members page and accepts on /app/invitation#token=…', async () => {
    const tab = await openConsole(browser, stack, '/account/members');
    const { page } = tab;
    page.setDefaultTimeout(20_000);
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    await page.getByRole('table', { name: /^Members of/ }).getByText(tenant.user.email).waitFor();
    await page.getByText('No pending invitations').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'account-members');

    // A bad address: the API's message under the field.
    await page.getByLabel('Email address').fill('not-an-address');
    await page.getByLabel('Email address').evaluate((el: HTMLInputElement) => { el.type = 'text'; });
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.locator('.field-invalid .field-error').first().waitFor();

    const invitee = `grace-${crypto.randomUUID().slice(0, 6)}@acme.example`;
    await page.getByLabel('Email address').fill(invitee);
    await page.getByLabel('Invite as').selectOption('role:admin');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const pending = page.getByRole('table', { name: 'Pending invitations' });
    await pending.getByRole('cell', { name: invitee, exact: true }).waitFor();

    const { rows } = await stack.sql.query(
      `SELECT m.text FROM emails e JOIN outbound_messages m ON m.id = e.message_id
       WHERE e.recipient = $1 AND m.origin = 'system' ORDER BY m.created_at DESC LIMIT 1`, [invitee]);
    const token = /#token=([A-Za-z0-9_-]+)/.exec(rows[0].text)![1]!;

    const guest = await openConsole(browser, stack, `/app/invitation#token=${token}`);
    await guest.page.getByLabel('Your name').fill('Grace');
    await guest.page.getByLabel('Password').fill(PASSWORD);
    await guest.page.getByRole('button', { name: 'Accept the invitation' }).click();
    await guest.page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await signInThroughUi(guest.page, { email: invitee, password: PASSWORD });
    await guest.context.close();

    await page.reload();
    const members = page.getByRole('table', { name: /^Members of/ });
    await members.getByText(invitee).waitFor();
    expect(await members.getByRole('row').filter({ hasText: invitee }).getByRole('cell', { name: 'admin', exact: true }).count()).toBe(1);
    await page.getByText('No pending invitations').waitFor();

    // Change her role to member, then remove her.
    await page.getByRole('button', { name: `Change role of ${invitee}` }).click();
    await page.getByLabel('New role').selectOption('role:member');
    await page.getByRole('button', { name: 'Save role' }).click();
    await members.getByRole('row').filter({ hasText: invitee }).getByRole('cell', { name: 'member', exact: true }).waitFor();
    await page.getByRole('button', { name: `Remove ${invitee}` }).click();
    await page.getByRole('button', { name: 'Remove member' }).click();
    await page.getByText(`${invitee} removed`).waitFor();
    await expect.poll(() => members.getByText(invitee).count()).toBe(0);

    // The last owner cannot step down: the API's refusal shows next to the role field, nothing changes.
    await page.getByRole('button', { name: `Change role of ${tenant.user.email}` }).click();
    await page.getByLabel('New role').selectOption('role:member');
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByRole('dialog').locator('.field-error').filter({ hasText: 'last owner' }).waitFor();
    expect((await stack.sql.query('SELECT role FROM memberships WHERE user_id = $1', [tenant.user.id])).rows[0].role).toBe('owner');
    expect(tab.foreignRequests).toEqual([]);
    expect(tab.errors).toEqual([]);
    await tab.context.close();
  }, 90_000);
});
