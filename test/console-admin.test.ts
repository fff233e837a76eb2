// The platform admin's pages in a real Chromium against the real stack
// (issue 27). A plain console session is not a platform admin (docs/console-ui.md
// "Platform admin"): the API refuses it on /api/v1/admin and the pages show
// only the unlock form; a wrong credential is refused next to its field; a
// platform credential unlocks pages listing what the API returns. A session of
// a platform admin (users.platform_admin) opens them without the form, and
// loses them on the next request once revoked. axe on each.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { axeViolations, launchBrowser, openConsole, screenshot, signInThroughUi, skipWithoutChromium, startConsoleStack, type ConsoleStack } from './support/browser.js';
import { consoleUser, cookieOf, signIn, withSession } from './support/console.js';
import { platformToken } from './support/stack.js';
import { enroll, heartbeat } from './support/relay.js';
import { startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';

const PASSWORD = 'correct horse battery staple';

describe.skipIf(skipWithoutChromium('console-admin'))('console platform admin pages in Chromium', () => {
  let stack: ConsoleStack;
  let browser: Browser;
  let admin: string;
  let tenant: Awaited<ReturnType<typeof consoleUser>>;
  let idp: TestOidcProvider | undefined;
  beforeAll(async () => {
    [stack, browser] = await Promise.all([startConsoleStack({ settings: { SERVICE_RATELIMIT_LOGIN_PER_MINUTE: '1000' } }), launchBrowser()]);
    admin = await platformToken(stack);
    tenant = await consoleUser(stack, admin, PASSWORD, 'acme');
  });
  afterAll(async () => {
    await idp?.close();
    await browser?.close();
    await stack?.stop();
  });

  test('a session is no platform admin: the API refuses it and the admin pages stay locked', async () => {
    const cookie = cookieOf((await signIn(stack, { email: tenant.user.email, password: PASSWORD })).headers.get('set-cookie'));
    const refused = await stack.call('GET', '/api/v1/admin/users', { headers: withSession(stack, cookie) });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('admin privileges required');

    const tab = await openConsole(browser, stack, '/admin/users');
    const { page } = tab;
    page.setDefaultTimeout(20_000);
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
    await page.getByRole('heading', { name: 'Unlock with a platform credential' }).waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    expect(await page.locator('main').getByText(tenant.user.email).count()).toBe(0);
    // The page asked as the session and was refused: the same 403.
    expect(await page.evaluate(async () => (await fetch('/api/v1/admin/users')).status)).toBe(403);

    // A wrong credential: the API's refusal next to the field, still locked.
    await page.getByLabel('Platform credential', { exact: true }).fill('mya_not-a-real-credential-at-all');
    await page.getByRole('button', { name: 'Unlock' }).click();
    await page.locator('.field-invalid .field-error').waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'admin-locked');
    expect(tab.foreignRequests).toEqual([]);
    expect(tab.errors).toEqual([]);
    await tab.context.close();
  }, 90_000);

  test('a platform credential unlocks users, plans and projects, identity providers, settings, certificates and listeners, relay nodes', async () => {
    const tab = await openConsole(browser, stack, '/admin');
    const { page } = tab;
    page.setDefaultTimeout(20_000);
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
    await page.getByLabel('Platform credential', { exact: true }).fill(admin);
    await page.getByRole('button', { name: 'Unlock' }).click();

    // Users: what GET /api/v1/admin/users answers, every one.
    const { body: { users } } = await stack.call('GET', '/api/v1/admin/users', { token: admin });
    const usersTable = page.getByRole('table', { name: 'Users' });
    await usersTable.waitFor();
    for (const u of users) await usersTable.getByText(u.id).waitFor();
    expect(await usersTable.getByRole('row').count()).toBe(users.length + 1);
    // The credential is in no storage and no URL.
    expect(await page.evaluate(() => localStorage.length + sessionStorage.length)).toBe(0);
    expect(page.url()).not.toContain('mya_');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'admin-users');

    // Add a user; a duplicate is refused next to the email field.
    await page.getByLabel('Email', { exact: true }).fill('lin@acme.example');
    await page.getByLabel('Name', { exact: true }).fill('Lin');
    await page.getByRole('button', { name: 'Add user' }).click();
    await usersTable.getByText('lin@acme.example').waitFor();
    await page.getByLabel('Email', { exact: true }).fill('LIN@acme.example');
    await page.getByLabel('Name', { exact: true }).fill('Lin again');
    await page.getByRole('button', { name: 'Add user' }).click();
    await page.locator('.form-error, .field-error').filter({ hasText: /already|exists|duplicate/i }).first().waitFor();

    // Plans and projects: made from the page, seen by the API.
    await page.getByRole('link', { name: 'Plans & projects' }).click();
    await page.getByLabel('Plan name').fill('starter');
    await page.getByLabel('Emails an hour').fill('100');
    await page.getByRole('button', { name: 'Create plan' }).click();
    await page.getByRole('table', { name: 'Plans' }).getByRole('cell', { name: 'starter', exact: true }).waitFor();
    await page.getByLabel('Project name').fill('Lin\'s project');
    await page.getByLabel('Plan', { exact: true }).selectOption({ label: 'starter' });
    await page.getByLabel('Owner').selectOption({ label: 'lin@acme.example' });
    await page.getByRole('button', { name: 'Create project' }).click();
    const projectsTable = page.getByRole('table', { name: 'Projects' });
    await projectsTable.getByRole('cell', { name: 'Lin\'s project', exact: true }).waitFor();
    expect((await stack.sql.query(`SELECT count(*)::int AS n FROM projects p JOIN plans pl ON pl.id = p.plan_id WHERE p.name = 'Lin''s project' AND pl.name = 'starter'`)).rows[0].n).toBe(1);
    // Every project is listed (GET /api/v1/admin/projects), and the search keeps the ones whose name holds it.
    await projectsTable.getByRole('cell', { name: 'acme', exact: true }).waitFor();
    await page.getByLabel('Search projects by name').fill('LIN\'S');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => projectsTable.getByRole('row').count()).toBe(2);
    await projectsTable.getByRole('cell', { name: 'Lin\'s project', exact: true }).waitFor();
    expect(await axeViolations(page)).toEqual([]);

    // Identity providers, settings, certificates and listeners: what the API lists.
    // Identity providers: add one from the page against a loopback OpenID provider; a bad issuer is refused under its field.
    await page.getByRole('link', { name: 'Identity providers' }).click();
    await page.getByText('No identity providers').waitFor();
    idp = await startOidcProvider({ clients: [{ client_id: 'console', client_secret: 'the provider secret', redirect_uris: [`${stack.origin}/app/api/session/oidc/callback`] }], accounts: [] });
    await page.getByLabel('Provider name').fill('Acme SSO');
    await page.getByLabel('Issuer URL').fill('http://sso.example.com');
    await page.getByLabel('Client id').fill('console');
    await page.getByLabel('Client secret').fill('the provider secret');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.locator('.field-invalid', { has: page.getByLabel('Issuer URL') }).locator('.field-error').waitFor();
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM identity_providers')).rows[0].n).toBe(0);
    await page.getByLabel('Issuer URL').fill(idp.issuer);
    await page.getByLabel('Allowed email domains').fill('acme.example, eu.acme.example');
    await page.getByLabel('Project new users join').fill(tenant.project.id);
    await page.getByRole('button', { name: 'Add provider' }).click();
    const providers = page.getByRole('table', { name: 'Identity providers' });
    await providers.getByText('Acme SSO').waitFor();
    await providers.getByText('acme.example, eu.acme.example').waitFor();
    const { rows: [stored] } = await stack.sql.query('SELECT issuer, client_id, allowed_domains, default_project_id, client_secret_sealed FROM identity_providers');
    expect(stored).toMatchObject({ issuer: idp.issuer, client_id: 'console', allowed_domains: ['acme.example', 'eu.acme.example'], default_project_id: tenant.project.id });
    expect(stored.client_secret_sealed).not.toContain('the provider secret');
    // The secret is gone from the form once sent.
    expect(await page.getByLabel('Client secret').inputValue()).toBe('');
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('link', { name: 'Settings' }).click();
    const { body: { settings } } = await stack.call('GET', '/api/v1/admin/settings', { token: admin });
    const settingsTable = page.getByRole('table', { name: 'Settings' });
    await settingsTable.waitFor();
    expect(await settingsTable.getByRole('row').count()).toBe(settings.length + 1);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'admin-settings');

    // Certificates: one made through the API is listed and assigned to the inbound listener from the page.
    expect((await stack.call('POST', '/api/v1/admin/certificates/generate-ca', { token: admin, body: { name: 'root', subject: { organization: 'Acme Ops' } } })).status).toBe(201);
    expect((await stack.call('POST', '/api/v1/admin/certificates/generate', { token: admin, body: { name: 'mx1', hosts: ['mx1.acme.example'], issuer: 'root' } })).status).toBe(201);
    await page.getByRole('link', { name: 'Certificates & listeners' }).click();
    const { body: { listeners } } = await stack.call('GET', '/api/v1/admin/listeners', { token: admin });
    for (const l of listeners) await page.getByRole('heading', { name: `Listener: ${l.name}` }).waitFor();
    await page.getByRole('table', { name: 'Certificates' }).getByText('mx1.acme.example').waitFor();
    await page.getByLabel('Certificate for inbound').selectOption('mx1');
    await page.getByRole('region', { name: 'Listener: inbound' }).getByRole('button', { name: 'Assign' }).click();
    await page.getByText('inbound presents mx1').waitFor();
    await expect.poll(async () => (await stack.call('GET', '/api/v1/admin/listeners', { token: admin })).body.listeners.find((l: { name: string }) => l.name === 'inbound')?.certificate?.name).toBe('mx1');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'admin-certificates');

    await page.getByRole('link', { name: 'Relay nodes' }).click();
    await page.getByLabel('Project id').fill(tenant.project.id);
    await page.getByRole('button', { name: 'Show nodes' }).click();
    await page.getByText('No relay nodes in this project').waitFor();
    expect(await axeViolations(page)).toEqual([]);

    // Lock: the pages are gone and the credential with them.
    await page.getByRole('button', { name: 'Lock' }).click();
    await page.getByRole('heading', { name: 'Unlock with a platform credential' }).waitFor();
    expect(await page.getByLabel('Platform credential', { exact: true }).inputValue()).toBe('');
    // The page itself asked nothing of the provider: the Worker read its discovery document.
    expect(tab.foreignRequests).toEqual([]);
    expect(tab.errors).toEqual([]);
    await tab.context.close();
  }, 90_000);

  test('a platform admin\'s session opens the pages without the form; grants from the Users page; sees every project\'s relay nodes and dead letters; loses it on revoke', async () => {
    const ops = await consoleUser(stack, admin, PASSWORD, 'ops');
    expect((await stack.call('PUT', `/api/v1/admin/users/${ops.user.id}/platform-admin`, { token: admin })).status).toBe(200);
    const node = await enroll(stack, (await tenant.key(['relay:write'])).token, 'mx-acme');
    expect((await heartbeat(stack, node.token, { spool_depth: 1, dead_letters: 3, dead_letter_bytes: 10_240 })).status).toBe(200);

    const tab = await openConsole(browser, stack, '/admin/users');
    const { page } = tab;
    page.setDefaultTimeout(20_000);
    await signInThroughUi(page, { email: ops.user.email, password: PASSWORD });
    const usersTable = page.getByRole('table', { name: 'Users' });
    await usersTable.waitFor();
    expect(await page.getByRole('heading', { name: 'Unlock with a platform credential' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Lock' }).count()).toBe(0);

    // Make the tenant's owner an admin from the page: the API holds it.
    await page.getByRole('button', { name: `Make admin: ${tenant.user.email}` }).click();
    await page.getByRole('button', { name: `Revoke admin: ${tenant.user.email}` }).waitFor();
    expect((await stack.sql.query('SELECT platform_admin FROM users WHERE id = $1', [tenant.user.id])).rows[0].platform_admin).toBe(true);
    await page.getByRole('button', { name: `Revoke admin: ${tenant.user.email}` }).click();
    await page.getByRole('button', { name: `Make admin: ${tenant.user.email}` }).waitFor();
    expect((await stack.sql.query('SELECT platform_admin FROM users WHERE id = $1', [tenant.user.id])).rows[0].platform_admin).toBe(false);
    expect(await axeViolations(page)).toEqual([]);

    // Relay nodes of every project, without naming one; the dead letters as the heartbeat reported them.
    await page.getByRole('link', { name: 'Relay nodes' }).click();
    const nodes = page.getByRole('table', { name: 'Relay nodes' });
    await nodes.getByText('mx-acme', { exact: true }).waitFor();
    await nodes.getByText('acme', { exact: true }).waitFor();
    await page.getByRole('button', { name: /dead letters of mx-acme$/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Dead letters of mx-acme' });
    await dialog.getByText(/3 messages \(10 kB\)/).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'admin-relay-nodes');
    await dialog.getByRole('button', { name: 'Close' }).click();

    // Revoked: the next request is refused, and the pages fall back to the form.
    expect((await stack.call('DELETE', `/api/v1/admin/users/${ops.user.id}/platform-admin`, { token: admin })).status).toBe(200);
    expect(await page.evaluate(async () => (await fetch('/api/v1/admin/users')).status)).toBe(403);
    await page.reload();
    await page.getByRole('heading', { name: 'Unlock with a platform credential' }).waitFor();
    expect(tab.foreignRequests).toEqual([]);
    expect(tab.errors).toEqual([]);
    await tab.context.close();
  }, 90_000);

  // Not an admin page, but the same stack: an owner manages the project's custom member groups on /account/members.
  test('custom member groups on the members page: create with permissions, a taken name refused, offered to invitations, edit, delete', async () => {
    const tab = await openConsole(browser, stack, '/account/members');
    const { page } = tab;
    page.setDefaultTimeout(20_000);
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
    await page.getByText('No custom groups').waitFor();
    await page.getByLabel('Group name', { exact: true }).fill('Senders');
    await page.getByRole('checkbox', { name: 'emails:write', exact: true }).check();
    await page.getByRole('checkbox', { name: 'emails:read', exact: true }).check();
    await page.getByRole('button', { name: 'Create group' }).click();
    const groups = page.getByRole('table', { name: 'Custom groups' });
    await groups.getByText(/^emails:(read|write), emails:(read|write)$/).waitFor();
    const { rows: [stored] } = await stack.sql.query('SELECT id, permissions FROM member_groups WHERE project_id = $1 AND name = $2', [tenant.project.id, 'Senders']);
    expect([...stored.permissions].sort()).toEqual(['emails:read', 'emails:write']);

    // The same name again: the API's 409 shown on the page, nothing made.
    await page.getByLabel('Group name', { exact: true }).fill('Senders');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.locator('.form-error, .field-error').filter({ hasText: /already|taken|exists/i }).first().waitFor();
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM member_groups WHERE project_id = $1', [tenant.project.id])).rows[0].n).toBe(1);

    // The invitation form offers the new group.
    await page.getByLabel('Invite as').locator('option', { hasText: 'Senders' }).waitFor({ state: 'attached' });

    await page.getByRole('button', { name: 'Edit group Senders' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit group Senders' });
    await dialog.getByLabel('Group name', { exact: true }).fill('Mail senders');
    await dialog.getByRole('checkbox', { name: 'emails:read', exact: true }).uncheck();
    await dialog.getByRole('button', { name: 'Save group' }).click();
    await groups.getByText('Mail senders').waitFor();
    expect((await stack.sql.query('SELECT name, permissions FROM member_groups WHERE id = $1', [stored.id])).rows[0]).toEqual({ name: 'Mail senders', permissions: ['emails:write'] });
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Delete group Mail senders' }).click();
    await page.getByRole('dialog', { name: 'Delete group Mail senders?' }).getByRole('button', { name: 'Delete group' }).click();
    await page.getByText('No custom groups').waitFor();
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM member_groups WHERE id = $1', [stored.id])).rows[0].n).toBe(0);
    expect(tab.foreignRequests).toEqual([]);
    expect(tab.errors).toEqual([]);
    await tab.context.close();
  }, 90_000);
});
