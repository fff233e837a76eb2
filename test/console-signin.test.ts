// The web console's password sign-in in a real Chromium against the real
// stack (issue 27): the sign-in page, the signed-in layout in the user's
// project, axe-core clean, nothing fetched from another origin.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { axeViolations, launchBrowser, openConsole, screenshot, signInThroughUi, skipWithoutChromium } from './support/browser.js';
import { consoleUser } from './support/console.js';
import { platformToken, startTestStack, type TestStack } from './support/stack.js';

const PASSWORD = 'correct horse battery staple';

describe.skipIf(skipWithoutChromium('console-signin'))('console sign-in in Chromium', () => {
  let stack: TestStack;
  let browser: Browser;
  let tenant: Awaited<ReturnType<typeof consoleUser>>;
  beforeAll(async () => {
    [stack, browser] = await Promise.all([startTestStack(), launchBrowser()]);
    tenant = await consoleUser(stack, await platformToken(stack), PASSWORD, 'acme');
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  test('an unknown path while signed out leads to sign-in; the password signs in to the project\'s shell', async () => {
    const tab = await openConsole(browser, stack, '/domains');
    const { page } = tab;
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in');

    // A wrong password: the API's message, shown on the form, still signed out.
    await page.getByLabel('Email').fill(tenant.user.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 }).toContain('invalid email or password');

    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
    // Back where the person was going, in their project, every area in the nav.
    await page.getByRole('heading', { name: 'Domains', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/domains');
    expect(await page.getByRole('combobox', { name: 'Project' }).inputValue()).toBe(tenant.project.id);
    const nav = page.getByRole('navigation', { name: 'Console' });
    for (const area of ['Keys', 'Domains', 'Send', 'Emails', 'Inbound', 'Webhooks', 'Templates', 'Suppressions', 'Bounces', 'Analytics', 'Audit', 'Account', 'Admin']) {
      expect(await nav.getByRole('link', { name: area, exact: true }).count(), area).toBe(1);
    }
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'shell');
    expect(tab.foreignRequests).toEqual([]);
    expect(tab.errors).toEqual([]);
    await tab.context.close();
  });

  test('a project requiring single sign-on tells a password session so, instead of failing page by page', async () => {
    const strict = await consoleUser(stack, await platformToken(stack), PASSWORD, 'strict');
    await stack.sql.query('UPDATE projects SET sso_required = true WHERE id = $1', [strict.project.id]);
    const tab = await openConsole(browser, stack, '/sign-in');
    await signInThroughUi(tab.page, { email: strict.user.email, password: PASSWORD });
    await expect.poll(() => tab.page.getByRole('alert').filter({ hasText: 'strict requires single sign-on: sign out, then sign in through your identity provider' }).count(), { timeout: 10_000 }).toBe(1);
    expect(await axeViolations(tab.page)).toEqual([]);
    await tab.context.close();
  });
});
