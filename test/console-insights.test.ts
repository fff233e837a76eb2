// The web console's Suppressions, Bounces, Analytics and Audit areas in a real
// Chromium against the real stack (issue 27): suppressions paged, added and
// removed; a simulated hard bounce settled by a relay node's claim shown with
// its codes and linked to its email; daily outcomes and usage against the
// plan's limits drawn with the seeded numbers and moving live as mail moves;
// the audit log paged by offset and the person's own security events. axe on
// each main page, screenshots.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, launchBrowser, openConsole, screenshot, signInThroughUi, skipWithoutChromium, type ConsoleTab } from './support/browser.js';
import { consoleUser } from './support/console.js';
import { enroll, type EnrolledNode } from './support/relay.js';
import { platformToken, startTestStack, type TestStack } from './support/stack.js';

const PASSWORD = 'correct horse battery staple';
// The simulator's mailboxes at the host of server.public_url (the tests' https://mail.example.com).
const BOUNCE = 'bounce@simulator.mail.example.com';
const DELIVERED = 'delivered@simulator.mail.example.com';
const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

describe.skipIf(skipWithoutChromium('console-insights'))('console suppressions, bounces, analytics and audit in Chromium', () => {
  let stack: TestStack;
  let browser: Browser;
  let tenant: Awaited<ReturnType<typeof consoleUser>>;
  let token: string;
  let node: EnrolledNode;
  let tab: ConsoleTab;
  let page: Page;
  beforeAll(async () => {
    [stack, browser] = await Promise.all([startTestStack(), launchBrowser()]);
    const admin = await platformToken(stack);
    tenant = await consoleUser(stack, admin, PASSWORD, 'insights');
    token = (await tenant.key(['*'])).token;
    const projectId = tenant.project.id as string;
    const domain = await stack.call('POST', '/api/v1/domains', { token, body: { name: 'acme.test' } });
    expect(domain.status).toBe(201);
    await stack.sql.query('UPDATE domains SET verified_at = now(), ownership_proven_at = now() WHERE id = $1', [domain.body.domain.id]);
    node = await enroll(stack, token);
    const plan = await stack.call('POST', '/api/v1/admin/plans', { token: admin, body: { name: 'starter', hourly_email_limit: 10, daily_email_limit: 100 } });
    expect(plan.status).toBe(201);
    await stack.sql.query('UPDATE projects SET plan_id = $2 WHERE id = $1', [projectId, plan.body.plan.id]);
    // Yesterday's outcomes and opens/clicks, as the rollup triggers and the tracking recorder keep them.
    for (const [status, count] of [['sent', 12], ['bounced', 2], ['complained', 1], ['failed', 3], ['suppressed', 4]] as const) {
      await stack.sql.query(`INSERT INTO email_daily_counts (project_id, day, from_domain, tag, status, count) VALUES ($1, $2, 'acme.test', '', $3, $4)`, [projectId, yesterday, status, count]);
    }
    for (const [kind, machine, count] of [['open', false, 5], ['open', true, 4], ['click', false, 2]] as const) {
      await stack.sql.query(`INSERT INTO tracking_daily_counts (project_id, day, from_domain, tag, kind, machine, count) VALUES ($1, $2, 'acme.test', '', $3, $4, $5)`, [projectId, yesterday, kind, machine, count]);
    }
    // 60 suppressions (more than a page), and 70 older audit events (more than a page).
    await stack.sql.query(`INSERT INTO suppressions (project_id, address, reason) SELECT $1, 'bulk' || lpad(g::text, 2, '0') || '@example.org', 'manual' FROM generate_series(1, 60) g`, [projectId]);
    await stack.sql.query(`INSERT INTO audit_events (category, type, project_id, actor_email, method, path, status, client_ip, created_at)
      SELECT 'project', 'apikey.created', $1, 'api key old-' || g, 'POST', '/api/v1/api-keys', 201, '192.0.2.' || g, now() - interval '1 day' - g * interval '1 minute' FROM generate_series(1, 70) g`, [projectId]);
    tab = await openConsole(browser, stack, '/suppressions');
    page = tab.page;
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
  }, 60_000);
  afterAll(async () => {
    await tab?.context.close();
    await browser?.close();
    await stack?.stop();
  });

  const apiGet = async (path: string) => (await stack.call('GET', path, { token })).body;
  const rows = (caption: string) => page.getByRole('table', { name: caption }).locator('tbody tr');

  test('suppressions: paged by address, added with a reason, removed', async () => {
    await page.getByRole('heading', { name: 'Suppressions', level: 1 }).waitFor();
    await expect.poll(() => rows('Suppressed addresses').count()).toBe(50);
    expect(await rows('Suppressed addresses').first().textContent()).toContain('bulk01@example.org');
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => rows('Suppressed addresses').count()).toBe(60);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);

    // A bad address: the API's words under the Address field, nothing added.
    await page.getByRole('button', { name: 'Add suppression' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a suppression' });
    await dialog.getByLabel('Address').fill('not an address');
    await dialog.getByRole('button', { name: 'Add suppression' }).click();
    await dialog.locator('.field-invalid .field-error').waitFor();
    expect(await dialog.getByLabel('Address').getAttribute('aria-invalid')).toBe('true');

    await dialog.getByLabel('Address').fill('Ann <Ann@Example.org>');
    await dialog.getByLabel('Reason').selectOption('unsubscribe');
    await dialog.getByLabel('Detail').fill('asked by phone');
    await dialog.getByRole('button', { name: 'Add suppression' }).click();
    const ann = rows('Suppressed addresses').filter({ hasText: 'ann@example.org' });
    await ann.waitFor();
    expect(await ann.textContent()).toContain('Unsubscribe');
    expect(await ann.textContent()).toContain('asked by phone');
    const stored = (await apiGet('/api/v1/suppressions?limit=1')).suppressions[0];
    expect(stored).toMatchObject({ address: 'ann@example.org', reason: 'unsubscribe', detail: 'asked by phone' });
    await screenshot(page, 'suppressions');

    // Filter by reason.
    await page.getByLabel('Reason').selectOption('unsubscribe');
    await expect.poll(() => rows('Suppressed addresses').count()).toBe(1);

    await page.getByRole('button', { name: 'Remove ann@example.org' }).click();
    await page.getByRole('dialog', { name: 'Remove ann@example.org?' }).getByRole('button', { name: 'Remove suppression' }).click();
    await page.getByRole('heading', { name: 'No suppression matches' }).waitFor();
    expect((await stack.call('GET', `/api/v1/suppressions/${stored.id}`, { token })).status).toBe(404);
  });

  test('analytics: the seeded days drawn with their numbers; usage against the plan moves live as mail moves', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Analytics' }).click();
    await page.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor();
    await expect.poll(() => page.getByTestId('total-sent').textContent()).toBe('12');
    expect(await page.getByTestId('total-bounced').textContent()).toBe('2');
    expect(await page.getByTestId('total-complained').textContent()).toBe('1');
    expect(await page.getByTestId('total-failed').textContent()).toBe('3');
    // The chart: yesterday's stacked bar carries each outcome; its description says the numbers.
    const bar = page.locator(`g[data-day="${yesterday}"]`).first();
    for (const [series, value] of [['sent', '12'], ['bounced', '2'], ['complained', '1'], ['failed', '3']]) {
      expect(await bar.locator(`rect[data-series="${series}"]`).getAttribute('data-value'), series).toBe(value);
    }
    const chart = page.getByRole('img', { name: /Daily outcomes/ });
    expect(await chart.locator('desc').textContent()).toContain('12 sent, 2 bounced, 1 complained, 3 failed');
    // Opens and clicks by people are charted; machine fetches are said apart.
    const opens = page.locator(`g[data-day="${yesterday}"]`).nth(1);
    expect(await opens.locator('rect[data-series="opens"]').getAttribute('data-value')).toBe('5');
    expect(await opens.locator('rect[data-series="clicks"]').getAttribute('data-value')).toBe('2');
    await page.getByText('Machine fetches left out of the chart: 4 opens, 0 clicks').waitFor();
    // The same numbers as a table.
    await page.getByRole('button', { name: 'Show as a table' }).click();
    const day = page.getByRole('table', { name: /Outcomes, opens and clicks per day/ }).getByRole('row', { name: new RegExp(`^${yesterday}`) });
    expect((await day.locator('td').allTextContents())).toEqual(['12', '2', '1', '3', '4', '9', '2']);

    expect(await page.getByTestId('usage-hour').textContent()).toContain('0 / 10');
    expect(await page.getByTestId('usage-day').textContent()).toContain('0 / 100');
    expect(await axeViolations(page)).toEqual([]);

    // Two sends to the simulator, settled by a relay node's claim: the page follows without a reload.
    for (const to of [BOUNCE, DELIVERED]) {
      const sent = await stack.call('POST', '/api/v1/emails/send', { token, body: { from: 'news@acme.test', to: [to], subject: 'Simulated', text: 'Hello.' } });
      expect(sent.status).toBe(201);
    }
    const claim = await stack.call('POST', '/relay/v1/outbound/claim', { token: node.token, body: { max: 10 } });
    expect(claim.status).toBe(200);
    await expect.poll(() => page.getByTestId('usage-hour').textContent(), { timeout: 15_000 }).toContain('2 / 10');
    expect(await page.getByTestId('usage-day').textContent()).toContain('2 / 100');
    await expect.poll(() => page.getByTestId('total-sent').textContent(), { timeout: 10_000 }).toBe('13');
    await expect.poll(() => page.getByTestId('total-bounced').textContent(), { timeout: 10_000 }).toBe('3');
    await page.getByRole('button', { name: 'Hide the numbers' }).click();
    await screenshot(page, 'analytics');
  });

  test('bounces: the simulated hard bounce with its SMTP code, enhanced status and diagnostic, one click from its email', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Bounces' }).click();
    const row = rows('Bounces and complaints').filter({ hasText: BOUNCE });
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    expect(cells.slice(0, 4)).toEqual([BOUNCE, 'Hard', '550', '5.1.1']);
    expect(cells[4]).toContain('simulated hard bounce (no such user)');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'bounces');

    const [bounce] = (await apiGet('/api/v1/bounces')).bounces;
    await row.getByRole('link', { name: BOUNCE }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/emails/${bounce.email_id}`);

    // The hard bounce suppressed the address; its entry links to the same email.
    await page.goto(tab.url('/suppressions'));
    await page.getByLabel('Reason').selectOption('hard_bounce');
    const entry = rows('Suppressed addresses').filter({ hasText: BOUNCE });
    await entry.waitFor();
    expect(await entry.getByRole('link', { name: 'Open the email' }).getAttribute('href')).toBe(`/emails/${bounce.email_id}`);
  });

  test('audit: the project log paged by offset, and my own security events', async () => {
    await page.goto(tab.url('/audit'));
    await page.getByRole('heading', { name: 'Audit', level: 1 }).waitFor();
    await expect.poll(() => rows('Project audit log').count()).toBe(50);
    // Newest first: this session's own change (the suppression removed above), by this person, before the seeded old ones.
    expect(await rows('Project audit log').filter({ hasText: 'suppression.deleted' }).textContent()).toContain(tenant.user.email);
    expect(await rows('Project audit log').first().textContent()).not.toContain('api key old-');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'audit');
    const total = 70 + Number((await stack.sql.query(`SELECT count(*) FROM audit_events WHERE project_id = $1 AND created_at > now() - interval '1 hour'`, [tenant.project.id])).rows[0].count);
    await page.getByRole('link', { name: 'Older' }).click();
    await expect.poll(() => new URL(page.url()).search).toBe('?offset=50');
    await expect.poll(() => rows('Project audit log').count()).toBe(total - 50);
    expect(await page.getByText(`Events 51–${total}`).count()).toBe(1);
    expect(await rows('Project audit log').last().textContent()).toContain('api key old-70');
    await page.getByRole('link', { name: 'Newer' }).click();
    await expect.poll(() => rows('Project audit log').count()).toBe(50);

    await page.getByRole('link', { name: 'My security events' }).click();
    const signIn = rows('My security events').filter({ hasText: 'auth.login' }).first();
    await signIn.waitFor();
    expect(await signIn.textContent()).toContain('Chrome');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'security-events');
    expect(tab.foreignRequests).toEqual([]);
    expect(tab.errors).toEqual([]);
  });
});
