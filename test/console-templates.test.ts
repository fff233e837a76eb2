// The web console's Templates area in a real Chromium against the real stack
// (issue 27): create a template, write two languages with a live preview from
// sample data (the API's own render, shown in a sandboxed frame), the API's
// field errors next to the field, activate, edit a copy, roll back, send a
// test that lands in the email log, and stylesheets. axe on each main page.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, launchBrowser, openConsole, PHONE, screenshot, signInThroughUi, skipWithoutChromium, type ConsoleTab } from './support/browser.js';
import { consoleUser } from './support/console.js';
import { platformToken, startTestStack, type TestStack } from './support/stack.js';

const PASSWORD = 'correct horse battery staple';

describe.skipIf(skipWithoutChromium('console-templates'))('console templates in Chromium', () => {
  let stack: TestStack;
  let browser: Browser;
  let tenant: Awaited<ReturnType<typeof consoleUser>>;
  let token: string;
  let tab: ConsoleTab;
  let page: Page;
  beforeAll(async () => {
    [stack, browser] = await Promise.all([startTestStack(), launchBrowser()]);
    tenant = await consoleUser(stack, await platformToken(stack), PASSWORD, 'templates');
    token = (await tenant.key(['*'])).token;
    const domain = await stack.call('POST', '/api/v1/domains', { token, body: { name: 'acme.test' } });
    expect(domain.status).toBe(201);
    await stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domain.body.domain.id]);
    tab = await openConsole(browser, stack, '/templates');
    page = tab.page;
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
  }, 60_000);
  afterAll(async () => {
    await tab?.context.close();
    await browser?.close();
    await stack?.stop();
  });

  const apiGet = async (path: string) => (await stack.call('GET', path, { token })).body;
  const preview = () => page.frameLocator('iframe[title="Rendered HTML body"]');
  const subjectShown = () => page.getByTestId('preview-subject').textContent();

  test('create a template and write it in two languages with a live preview; the API\'s errors sit next to the field', async () => {
    await page.getByRole('heading', { name: 'No templates yet' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'New template' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'New template' });
    await dialog.getByLabel('Name').fill('Password reset');
    await dialog.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Password reset · version 1', level: 1 }).waitFor();

    // The first language, then its parts and sample data: the draft saves itself and the preview follows.
    await page.getByLabel('Add a language').fill('en');
    await page.getByRole('button', { name: 'Add language' }).click();
    await page.getByRole('tab', { name: 'en (default)' }).waitFor();
    await page.getByLabel('Subject').fill('Reset, {{name}}');
    await page.getByLabel('HTML body').fill('<p>Hello <b>{{name}}</b></p><script>document.title = "ran"</script>');
    await page.getByLabel('Text body').fill('Hello {{name}}');
    await page.getByLabel('Sample data').fill('{"name": "Ada"}');
    await expect.poll(subjectShown, { timeout: 10_000 }).toBe('Reset, Ada');
    await expect.poll(() => preview().locator('b').textContent()).toBe('Ada');
    // The frame is sandboxed without scripts or same-origin: the template's script did not run.
    const frame = page.locator('iframe[title="Rendered HTML body"]');
    expect(await frame.getAttribute('sandbox')).toBe('');
    expect(await page.title()).not.toBe('ran');
    await page.getByRole('status').filter({ hasText: 'Draft saved' }).waitFor();

    // Live: an edit re-renders through the API.
    await page.getByLabel('Subject').fill('Reset your password, {{name}}');
    await expect.poll(subjectShown, { timeout: 10_000 }).toBe('Reset your password, Ada');
    await page.getByRole('button', { name: 'Text', exact: true }).click();
    await expect.poll(() => page.getByTestId('preview-text').textContent()).toBe('Hello Ada');
    await page.getByRole('button', { name: 'HTML', exact: true }).click();

    // A variable the data lacks: the render's refusal in the preview, in the API's words.
    await page.getByLabel('Sample data').fill('{"nom": "Ada"}');
    await expect.poll(() => page.locator('.tp-preview-error').textContent(), { timeout: 10_000 }).toContain('missing variable: name');
    await page.getByLabel('Sample data').fill('{"name": "Ada"}');
    await expect.poll(subjectShown, { timeout: 10_000 }).toBe('Reset your password, Ada');

    // A second language starts as a copy of the current one.
    await page.getByLabel('Add a language').fill('PT-br');
    await page.getByRole('button', { name: 'Add language' }).click();
    await page.getByRole('tab', { name: 'pt-BR' }).waitFor();
    await page.getByLabel('Subject').fill('Redefinir a senha, {{name}}');
    await page.getByLabel('HTML body').fill('<p>Olá <b>{{name}}</b></p>');
    await expect.poll(subjectShown, { timeout: 10_000 }).toBe('Redefinir a senha, Ada');
    expect(await page.locator('.tp-preview-meta').textContent()).toContain('pt-BR');

    // A blank subject: the API names localizations.1.subject, shown under the Subject field.
    await page.getByLabel('Subject').fill('   ');
    const subjectError = page.locator('.field-invalid .field-error');
    await expect.poll(() => subjectError.textContent(), { timeout: 10_000 }).toBe('must not be empty');
    expect(await page.getByLabel('Subject').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Subject').fill('Redefinir a senha, {{name}}');
    await page.getByRole('status').filter({ hasText: 'Draft saved' }).waitFor({ timeout: 10_000 });

    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel('Subject').blur();
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'template-editor');

    const [template] = (await apiGet('/api/v1/templates')).templates;
    const [v1] = (await apiGet(`/api/v1/templates/${template.id}`)).template.versions;
    const { localizations } = await apiGet(`/api/v1/templates/${template.id}/versions/${v1.id}/localizations`);
    expect(localizations.map((l: { language: string; subject: string }) => [l.language, l.subject])).toEqual([
      ['en', 'Reset your password, {{name}}'], ['pt-BR', 'Redefinir a senha, {{name}}'],
    ]);
    expect(v1.sample_data).toBe('{"name": "Ada"}');
  });

  test('activate, edit a copy, activate it, roll back; the versions table says which is live', async () => {
    await page.getByRole('link', { name: 'All versions' }).click();
    await page.getByRole('heading', { name: 'Password reset', level: 1 }).waitFor();
    await page.getByText('No version is active yet').waitFor();
    await page.getByRole('button', { name: 'Activate version 1' }).click();
    await page.getByRole('dialog', { name: 'Activate version 1?' }).getByRole('button', { name: 'Activate' }).click();
    await page.getByText('Sends by this template use version 1').waitFor();
    const [template] = (await apiGet('/api/v1/templates')).templates;
    const versions = async () => (await apiGet(`/api/v1/templates/${template.id}`)).template.versions as { id: string; version: number; active: boolean }[];
    expect((await versions()).find((v) => v.active)?.version).toBe(1);
    expect(await axeViolations(page)).toEqual([]);

    // An active version is frozen: the editor is read-only and offers a copy.
    await page.getByRole('link', { name: 'Version 1' }).click();
    await page.getByText('cannot change').waitFor();
    expect(await page.getByLabel('Subject').getAttribute('readonly')).not.toBeNull();
    await page.getByRole('button', { name: 'Edit a copy as a new version' }).click();
    await page.getByRole('heading', { name: 'Password reset · version 2', level: 1 }).waitFor();
    await page.getByLabel('Subject').fill('Version two, {{name}}');
    await expect.poll(subjectShown, { timeout: 10_000 }).toBe('Version two, Ada');
    await page.getByRole('status').filter({ hasText: 'Draft saved' }).waitFor();

    await page.getByRole('link', { name: 'All versions' }).click();
    await page.getByRole('button', { name: 'Activate version 2' }).click();
    await page.getByRole('dialog', { name: 'Activate version 2?' }).getByRole('button', { name: 'Activate' }).click();
    await page.getByText('Sends by this template use version 2').waitFor();
    expect((await versions()).find((v) => v.active)?.version).toBe(2);

    await page.getByRole('button', { name: 'Roll back to version 1' }).click();
    await page.getByRole('dialog', { name: 'Roll back to version 1?' }).getByRole('button', { name: 'Roll back' }).click();
    await page.getByText('Sends by this template use version 1').waitFor();
    expect((await versions()).find((v) => v.active)?.version).toBe(1);
    await screenshot(page, 'template-versions');
  });

  test('a test send of a version goes out and is one click from its row in the email log', async () => {
    await page.getByRole('button', { name: 'Send a test of version 2' }).click();
    const dialog = page.getByRole('dialog', { name: 'Send a test of Password reset' });
    await dialog.getByLabel('From').fill('test@acme.test');
    await dialog.getByLabel('To').fill('qa@example.org');
    await dialog.getByRole('button', { name: 'Send test' }).click();
    // Polled on the dialog's whole text, so that a refusal shown instead is in the failure message.
    await expect.poll(() => dialog.textContent(), { timeout: 30_000 }).toContain('Test sent to qa@example.org');
    await dialog.getByRole('link', { name: 'Open it in the email log' }).click();
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/emails\/[0-9a-f-]{36}$/);
    const id = new URL(page.url()).pathname.split('/')[2];
    const { email } = await apiGet(`/api/v1/emails/${id}`);
    expect(email).toMatchObject({ to: ['qa@example.org'], subject: 'Version two, Ada', origin: 'test' });
  });

  test('stylesheets: create one, edit its CSS, pick it in a draft (its CSS goes into the preview\'s head)', async () => {
    await page.goto(tab.url('/templates/stylesheets'));
    await page.getByRole('heading', { name: 'No stylesheets yet' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'New stylesheet' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'New stylesheet' });
    await dialog.getByLabel('Name').fill('brand');
    await dialog.getByLabel('CSS').fill('b { color: red }');
    await dialog.getByRole('button', { name: 'Create stylesheet' }).click();
    await page.getByRole('heading', { name: 'brand', level: 1 }).waitFor();
    await page.getByLabel('CSS').fill('b { color: rebeccapurple }');
    await page.getByRole('button', { name: 'Save stylesheet' }).click();
    await page.getByText('Stylesheet saved').waitFor();
    const [sheet] = (await apiGet('/api/v1/stylesheets')).stylesheets;
    expect(sheet).toMatchObject({ name: 'brand', css: 'b { color: rebeccapurple }' });

    await page.getByRole('link', { name: 'All stylesheets' }).click();
    await page.getByRole('link', { name: 'brand' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'stylesheets');

    // Version 2 is a draft no more (it was activated): make version 3 and give it the stylesheet.
    const [template] = (await apiGet('/api/v1/templates')).templates;
    await page.goto(tab.url(`/templates/${template.id}`));
    await page.getByRole('button', { name: 'Copy version 2 as a new draft' }).click();
    await page.getByRole('heading', { name: 'Password reset · version 3', level: 1 }).waitFor();
    await page.getByLabel('Stylesheet').selectOption({ label: 'brand' });
    await page.getByRole('status').filter({ hasText: 'Draft saved' }).waitFor({ timeout: 10_000 });
    // The preview shows it applied: the frame's page (GET …/preview/html) carries a policy allowing the message's styles.
    const bold = preview().locator('b');
    await expect.poll(() => bold.evaluate((el) => getComputedStyle(el).color, undefined, { timeout: 2_000 }).catch(() => ''), { timeout: 20_000 }).toBe('rgb(102, 51, 153)');
    const v3 = (await apiGet(`/api/v1/templates/${template.id}`)).template.versions[0];
    expect(v3).toMatchObject({ version: 3, stylesheet_id: sheet.id });
  });

  test('the template list at a phone width', async () => {
    await page.setViewportSize(PHONE);
    await page.goto(tab.url('/templates'));
    await page.getByRole('link', { name: 'Password reset' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(tab.url('/templates'));
    await page.getByRole('link', { name: 'Password reset' }).waitFor();
    await screenshot(page, 'templates');
    expect(tab.foreignRequests).toEqual([]);
    // The only errors are the preview frame refusing what it must refuse: the template's script
    // (sandboxed, in the preview page the Worker serves with its own policy, which allows its inline styles).
    const blockedScript = /^Blocked script execution in '[^']*\/preview\/html\?/;
    expect(tab.errors.filter((e) => !blockedScript.test(e))).toEqual([]);
    expect(tab.errors.some((e) => blockedScript.test(e))).toBe(true);
  });
});
