// The template editor's preview with the template's own styles (issue 27): the
// HTML is a page the Worker serves (GET …/versions/{id}/preview/html) with the
// email preview's policy (inline styles, no script, nothing from any host,
// framed by this origin only), shown in a sandboxed frame. A `srcdoc` frame
// inherited the console's policy and dropped every style.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { previewPolicy } from '../edge/src/http/mail-preview.js';
import { launchBrowser, openConsole, signInThroughUi, skipWithoutChromium, type ConsoleTab } from './support/browser.js';
import { consoleUser } from './support/console.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { addStylesheet, addTemplate, addVersion } from './support/template-rows.js';

const PASSWORD = 'correct horse battery staple';
// The message's own <style>, a style="" and the stylesheet's rule; a script that would mark the page; a remote image.
const HTML = '<style>p.lead { color: rgb(1, 2, 3) }</style><p class="lead" style="font-weight: 700">Hello <b>{{name}}</b></p>'
  + '<script>document.body.setAttribute("data-ran", "yes")</script><img alt="logo" src="{{logo}}">';

let stack: TestStack;
let token: string;
let otherToken: string;
let tenant: Awaited<ReturnType<typeof consoleUser>>;
let templateId: string;
let versionId: string;
// Where the template's remote image points: a request here would tell a sender the message was read.
const images = { hits: 0, url: '', server: undefined as Server | undefined };

beforeAll(async () => {
  images.server = createServer((_req, res) => { images.hits++; res.end(); });
  await new Promise<void>((resolve) => images.server!.listen(0, '127.0.0.1', resolve));
  images.url = `http://127.0.0.1:${(images.server.address() as AddressInfo).port}`;
  stack = await startTestStack();
  const admin = await platformToken(stack);
  tenant = await consoleUser(stack, admin, PASSWORD, 'previews');
  token = (await tenant.key(['templates:read'])).token;
  otherToken = (await (await seedProject(stack, admin, 'other')).key(['templates:read'])).token;
  templateId = await addTemplate(stack, tenant.project.id, 'Welcome');
  const stylesheetId = await addStylesheet(stack, tenant.project.id, 'house', 'b { text-decoration: underline }');
  versionId = await addVersion(stack, templateId, {
    localizations: [{ language: 'en', subject: 'Hi {{name}}', html: HTML, text: 'Hello {{name}}' }, { language: 'de', subject: 'Hallo', text: 'Hallo' }],
    sampleData: JSON.stringify({ name: 'Ada', logo: `${images.url}/logo.png` }), stylesheetId,
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  images.server?.close();
});

const htmlPath = () => `/api/v1/templates/${templateId}/versions/${versionId}/preview/html`;
const get = (path: string, key = token) => fetch(`${stack.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

describe('GET …/versions/{versionId}/preview/html', () => {
  test('the rendered HTML with the sample data, under the email preview\'s policy: inline styles yes, script and remote hosts no, framed by this origin only', async () => {
    const r = await get(htmlPath());
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = r.headers.get('content-security-policy')!;
    expect(csp).toBe(previewPolicy('blocked'));
    expect(csp).toContain("style-src 'unsafe-inline'");
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).toContain("img-src data:;");
    expect(csp).toMatch(/sandbox(?! [^;]*allow-scripts)(?! [^;]*allow-same-origin)/);
    expect(csp).not.toMatch(/script-src|https?:/);
    expect(r.headers.get('cache-control')).toBe('private, no-store');
    const body = await r.text();
    // The stylesheet in <head> and, as every render does, inlined (docs/template-rendering.md "Stylesheets").
    expect(body).toMatch(/Hello <b[^>]*>Ada<\/b>/);
    expect(body).toContain('<style>b { text-decoration: underline }</style>');
    expect(body).toMatch(/<p class="lead" style="[^"]*font-weight: 700/);
  });

  test('data and language from the query; a localization without HTML is an empty page; bad data, another project\'s version: refused', async () => {
    const withData = await get(`${htmlPath()}?data=${encodeURIComponent('{"name":"<Grace>","logo":""}')}&language=en-GB`);
    expect(withData.status).toBe(200);
    expect(await withData.text()).toMatch(/Hello <b[^>]*>&lt;Grace&gt;<\/b>/);
    const german = await get(`${htmlPath()}?language=de`);
    expect(german.status).toBe(200);
    expect(await german.text()).not.toContain('<p');

    const notJson = await get(`${htmlPath()}?data=nope`);
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).fields).toHaveProperty('data');
    expect((await get(`${htmlPath()}?data=${encodeURIComponent('[1]')}`)).status).toBe(400);
    expect((await get(`${htmlPath()}?data=${encodeURIComponent(JSON.stringify({ x: 'y'.repeat(8000) }))}`)).status).toBe(400);
    const missing = await get(`${htmlPath()}?data=${encodeURIComponent('{"logo":""}')}`);
    expect(missing.status).toBe(422);
    expect((await missing.json()).error).toMatch(/missing variable: name/);
    expect((await get(htmlPath(), otherToken)).status).toBe(404);
  });
});

describe.skipIf(skipWithoutChromium('console-template-preview'))('the editor\'s preview in Chromium', () => {
  let browser: Browser;
  let tab: ConsoleTab;
  beforeAll(async () => {
    browser = await launchBrowser();
    tab = await openConsole(browser, stack, `/templates/${templateId}/versions/${versionId}`);
    await signInThroughUi(tab.page, { email: tenant.user.email, password: PASSWORD });
  }, 60_000);
  afterAll(async () => {
    await tab?.context.close();
    await browser?.close();
  });

  test('the template\'s styles apply in the frame (computed style); its script does not run and its remote image is not asked for', async () => {
    const { page } = tab;
    if (!page.url().includes(`/versions/${versionId}`)) await page.goto(tab.url(`/templates/${templateId}/versions/${versionId}`));
    const frame = page.locator('iframe[title="Rendered HTML body"]');
    await frame.waitFor();
    expect(await frame.getAttribute('sandbox')).toBe('');
    expect(await frame.getAttribute('src')).toMatch(new RegExp(`^/api/v1/templates/${templateId}/versions/${versionId}/preview/html\\?`));
    const lead = page.frameLocator('iframe[title="Rendered HTML body"]').locator('p.lead');
    await expect.poll(() => lead.textContent(), { timeout: 10_000 }).toBe('Hello Ada');
    // The message's <style>, its style="" and the stylesheet's rule, as computed in the frame.
    expect(await lead.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(1, 2, 3)');
    expect(await lead.evaluate((el) => getComputedStyle(el).fontWeight)).toBe('700');
    expect(await lead.locator('b').evaluate((el) => getComputedStyle(el).textDecorationLine)).toBe('underline');
    // The script did not run (in the frame, nor anywhere in the page), and nothing left this origin.
    expect(await lead.evaluate((el) => el.ownerDocument.body.getAttribute('data-ran'))).toBeNull();
    expect(await page.evaluate(() => document.body.getAttribute('data-ran'))).toBeNull();
    await page.waitForTimeout(300);
    expect(images.hits).toBe(0);
    expect(tab.foreignRequests.filter((u) => !u.startsWith(images.url))).toEqual([]);
    expect(tab.errors.some((e) => /^Blocked script execution in '[^']*\/preview\/html\?/.test(e))).toBe(true);
    expect(tab.errors.filter((e) => !/^Blocked script execution/.test(e) && !/^Loading the image '[^']*' violates the following Content Security Policy directive: "img-src data:"/.test(e))).toEqual([]);

    // An edit to the sample data renders again, with the new data, styles still applied.
    await page.getByLabel('Sample data').fill(JSON.stringify({ name: 'Grace', logo: `${images.url}/logo.png` }));
    await expect.poll(() => lead.textContent(), { timeout: 10_000 }).toBe('Hello Grace');
    expect(await lead.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(1, 2, 3)');
    await page.waitForTimeout(300);
    expect(images.hits).toBe(0);
  });
});
