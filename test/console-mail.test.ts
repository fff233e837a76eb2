// The console's mail pages in a real Chromium against the real stack (issue
// 27): keys (token shown once), domains (records, verify, tracking), send and
// the live email log (rows appear and move without a reload), inbound mail
// (verdicts, raw download, retry; its HTML sandboxed: no script runs, no remote
// image loads until asked) and webhooks (create, deliveries live, redeliver,
// rotate the secret). axe-clean, a screenshot of each main page.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, launchBrowser, openConsole, screenshot, signInThroughUi, skipWithoutChromium, type ConsoleTab } from './support/browser.js';
import { consoleUser } from './support/console.js';
import { enroll, forward, inboundMeta, type EnrolledNode } from './support/relay.js';
import { platformToken, startTestStack, type TestStack } from './support/stack.js';
import { startDohResponder, type DohResponder } from './support/doh-responder.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const PASSWORD = 'correct horse battery staple';
const DOMAIN = 'mail-acme.test';

describe.skipIf(skipWithoutChromium('console-mail'))('console mail pages in Chromium', () => {
  let stack: TestStack;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let doh: DohResponder;
  let tenant: Awaited<ReturnType<typeof consoleUser>>;
  let node: EnrolledNode;
  let sender: string;
  let tab: ConsoleTab;
  let page: Page;

  beforeAll(async () => {
    doh = await startDohResponder();
    [stack, browser, receiver] = await Promise.all([
      startTestStack({ settings: { SERVICE_DNS_DOH_URL: doh.url, SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SERVICE_WEBHOOK_RETRY_DELAY: '500ms', SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000' } }),
      launchBrowser(),
      startWebhookReceiver(),
    ]);
    tenant = await consoleUser(stack, await platformToken(stack), PASSWORD, 'mail');
    const manager = (await tenant.key(['domains:write', 'relay:write', 'inbound:write'])).token;
    sender = (await tenant.key(['emails:write', 'emails:read'])).token;
    // A sending domain, its DNS taken as checked (the domain page's own flow is tested below).
    const domain = await stack.call('POST', '/api/v1/domains', { token: manager, body: { name: DOMAIN } });
    expect(domain.status, JSON.stringify(domain.body)).toBe(201);
    await stack.sql.query('UPDATE domains SET verified_at = now(), ownership_proven_at = now() WHERE id = $1', [domain.body.domain.id]);
    node = await enroll(stack, manager);
    tab = await openConsole(browser, stack, '/keys');
    page = tab.page;
    await signInThroughUi(page, { email: tenant.user.email, password: PASSWORD });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await stack?.stop();
    await doh?.close();
  });

  /** The relay node takes every queued email and reports each one `outcome`. */
  async function deliverAll(outcome: 'sent' | 'failed' = 'sent'): Promise<string[]> {
    const claimed = await stack.call('POST', '/relay/v1/outbound/claim', { token: node.token, body: { max: 50 } });
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    const jobs = claimed.body.jobs as { email_id: string; attempt: number }[];
    const results = jobs.map((j) => ({
      email_id: j.email_id, attempt: j.attempt, outcome, smtp_code: outcome === 'sent' ? 250 : 550,
      reply: outcome === 'sent' ? '250 2.0.0 Ok: queued as 4XyZ' : '550 5.1.1 No such user', server: 'mx.example.org:25',
      started_at: new Date().toISOString(), duration_ms: 42,
    }));
    if (results.length) expect((await stack.call('POST', '/relay/v1/outbound/results', { token: node.token, body: { results } })).status).toBe(200);
    return jobs.map((j) => j.email_id);
  }

  const row = (p: Page, text: string) => p.getByRole('row').filter({ hasText: text });

  test('keys: create one with permissions from the catalogue, its token shown once; revoke, delete', async () => {
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name').fill('ci sender');
    await dialog.getByLabel('emails:write').check();
    await dialog.getByLabel('emails:read').check();
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('group', { name: 'API key token' });
    const token = (await shown.locator('code').textContent())!.trim();
    expect(token.length).toBeGreaterThan(20);
    await screenshot(page, 'keys');
    // The token works, with exactly what was picked.
    expect((await stack.call('GET', '/api/v1/emails', { token })).status).toBe(200);
    expect((await stack.call('GET', '/api/v1/domains', { token })).status).toBe(403);
    await shown.getByRole('button', { name: 'I have copied it' }).click();
    await shown.waitFor({ state: 'detached' });
    // Gone from the page and never stored.
    expect(await page.content()).not.toContain(token);
    const stored = await page.evaluate(() => JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage), document.cookie, location.href]));
    expect(stored).not.toContain(token);
    await expect.poll(() => row(page, 'ci sender').textContent()).toMatch(/emails:(write, emails:read|read, emails:write)/);

    await page.getByRole('button', { name: 'Revoke ci sender' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => row(page, 'ci sender').textContent()).toContain('revoked');
    expect((await stack.call('GET', '/api/v1/emails', { token })).status).toBe(401);
    await page.getByRole('button', { name: 'Delete ci sender' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete key' }).click();
    await expect.poll(() => row(page, 'ci sender').count()).toBe(0);
  });

  test('domains: add one, see the records to publish with copy buttons, verify, set tracking', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Domains', exact: true }).click();
    await page.getByRole('heading', { name: 'Domains', level: 1 }).waitFor();
    // The API's error sits under the field it names.
    await page.getByLabel('Domain', { exact: true }).fill('not a domain');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.locator('.field-error').first().waitFor();
    await page.getByLabel('Domain', { exact: true }).fill('shop-acme.test');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { name: 'shop-acme.test', level: 1 }).waitFor();
    const records = page.getByRole('table', { name: 'DNS records' });
    await records.waitFor();
    expect(await records.getByRole('row').filter({ hasText: '._domainkey.shop-acme.test' }).count()).toBe(1);
    expect(await records.getByRole('button', { name: 'Copy dkim record value' }).count()).toBe(1);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'domain');

    // Nothing published yet: verifying says so.
    await page.getByRole('button', { name: 'Verify DNS records' }).click();
    await page.locator('.toast').filter({ hasText: 'shop-acme.test: not verified yet' }).waitFor();
    // Publish what the page lists (as a person pastes the copied values), verify again: verified.
    for (const r of await records.getByRole('row').all()) {
      const cells = await r.getByRole('cell').allTextContents();
      if (cells[1] !== 'TXT') continue;
      const value = await r.getByRole('cell').nth(3).locator('code').textContent();
      const name = await r.getByRole('cell').nth(2).locator('code').textContent();
      doh.set(name!, 'TXT', [value!]);
    }
    await page.getByRole('button', { name: 'Verify DNS records' }).click();
    await page.locator('.toast').filter({ hasText: 'shop-acme.test is verified' }).waitFor();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).locator('..').textContent()).toContain('verified');

    await page.getByLabel('Track opens').check();
    await page.getByRole('button', { name: 'Save tracking' }).click();
    await expect.poll(async () => (await stack.sql.query("SELECT t.opens FROM domain_tracking t JOIN domains d ON d.id = t.domain_id WHERE d.name = 'shop-acme.test'").catch(() => ({ rows: [] }))).rows[0]?.opens).toBe(true);
  });

  test('send: a message from the Send page appears queued in the open log in another tab and moves to sent live; an API send appears too; its page shows the attempt', async () => {
    const log = await tab.context.newPage();
    await log.goto(tab.url('/emails'));
    await log.getByRole('heading', { name: 'Emails', level: 1 }).waitFor();
    await log.getByText('No email yet').waitFor();
    expect(await axeViolations(log)).toEqual([]);

    await page.goto(tab.url('/send'));
    await page.getByRole('heading', { name: 'Send', level: 1 }).waitFor();
    await page.getByLabel('From').fill(`Acme <news@${DOMAIN}>`);
    await page.getByLabel('To', { exact: true }).fill('ann@example.org');
    await page.getByLabel('Subject').fill('Console hello');
    await page.getByLabel('Text').fill('Hello from the console');
    await page.getByLabel('HTML (optional)').fill('<p style="color:#1f4fd6">Hello <b>from</b> the console</p>');
    await page.getByRole('button', { name: 'Send message' }).click();
    await row(page, 'ann@example.org').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'send');

    // The open log (no reload) shows it queued, then sent once the relay node reports it.
    await expect.poll(() => row(log, 'ann@example.org').textContent()).toContain('queued');
    await deliverAll('sent');
    await expect.poll(() => row(log, 'ann@example.org').textContent()).toContain('sent');
    await expect.poll(() => row(page, 'ann@example.org').textContent()).toContain('sent');

    // A send through the API, from elsewhere: its row appears with its first event.
    const api = await stack.call('POST', '/api/v1/emails/send', { token: sender, body: { from: `news@${DOMAIN}`, to: 'bob@example.org', subject: 'From the API', text: 'hi' } });
    expect(api.status, JSON.stringify(api.body)).toBe(201);
    await deliverAll('failed');
    await expect.poll(() => row(log, 'bob@example.org').textContent()).toContain('failed');
    await screenshot(log, 'emails');

    // The email's page: recipient, the attempt with the remote reply, the rendered HTML.
    await row(log, 'ann@example.org').getByRole('link', { name: 'ann@example.org' }).click();
    await log.getByRole('heading', { name: 'Console hello', level: 1 }).waitFor();
    await log.getByRole('table', { name: 'Delivery attempts' }).getByText('250 2.0.0 Ok: queued as 4XyZ').waitFor();
    const frame = log.frameLocator('iframe[title="Rendered HTML of the email"]');
    await frame.getByText('from').first().waitFor();
    expect(await log.locator('iframe').getAttribute('sandbox')).not.toMatch(/allow-scripts|allow-same-origin/);
    expect(await axeViolations(log)).toEqual([]);
    await screenshot(log, 'email');
    await log.close();
  });

  test('inbound: verdicts live, the HTML sandboxed (its script never runs, remote images load only when asked), raw download, retry; webhooks: create, deliveries live, redeliver, rotate', async () => {
    const hits = (path: string) => receiver.received().filter((r) => r.path.startsWith(path)).length;
    // A webhook for inbound mail, made in the console; its secret shown once.
    await page.goto(tab.url('/webhooks'));
    await page.getByText('No webhook yet').waitFor();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a webhook' });
    await dialog.getByLabel('URL').fill(`${receiver.url}/hooks`);
    await dialog.getByLabel('email.sent').uncheck();
    await dialog.getByLabel('email.failed').uncheck();
    await dialog.getByLabel('inbound.received').check();
    await dialog.getByLabel('Sender filters').fill('*@example.org');
    await dialog.getByRole('button', { name: 'Add webhook' }).click();
    const secretBox = page.getByRole('group', { name: 'Webhook signing secret' });
    const secret = (await secretBox.locator('code').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await secretBox.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('heading', { name: 'Webhook', exact: true, level: 1 }).waitFor();
    expect(await page.content()).not.toContain(secret);
    const webhookUrl = page.url();
    expect(new URL(webhookUrl).pathname).toMatch(/^\/webhook\/[0-9a-f-]{36}$/);

    // The inbound list is open when the mail arrives: it appears without a reload.
    await page.goto(tab.url('/inbound'));
    await page.getByText('No inbound mail yet').waitFor();
    const html = `<h1>Invoice</h1><p>Pay now</p><script>fetch('${receiver.url}/script-ran'); parent.document.title = 'pwned';</script>`
      + `<img alt="tracker" src="${receiver.url}/pixel.png"><img alt="onerror" src="x" onerror="fetch('${receiver.url}/onerror-ran')">`;
    const meta = inboundMeta([`billing@${DOMAIN}`], { auth: { spf: 'pass', dkim: 'fail', dmarc: 'fail', aligned: false, client_ip: '203.0.113.9' } });
    meta.parsed.subject = 'Invoice 42';
    meta.parsed.html = html;
    meta.parsed.text = 'Pay now';
    const forwarded = await forward(stack, node.token, { meta, raw: `From: ann@example.org\r\nSubject: Invoice 42\r\nContent-Type: text/html\r\n\r\n${html}\r\n` });
    expect(forwarded.status, JSON.stringify(forwarded.body)).toBe(200);
    const listed = row(page, 'Invoice 42');
    await listed.waitFor();
    for (const verdict of ['SPF pass', 'DKIM fail', 'DMARC fail', 'not aligned']) expect(await listed.textContent()).toContain(verdict);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'inbound');

    await listed.getByRole('link', { name: 'Invoice 42' }).click();
    await page.getByRole('heading', { name: 'Invoice 42', level: 1 }).waitFor();
    const iframe = page.locator('iframe[title^="HTML of the inbound message"]');
    expect(await iframe.getAttribute('sandbox')).not.toMatch(/allow-scripts|allow-same-origin/);
    const frame = page.frameLocator('iframe[title^="HTML of the inbound message"]');
    await frame.getByRole('heading', { name: 'Invoice' }).waitFor();
    await page.waitForTimeout(500);
    expect(hits('/pixel.png')).toBe(0);
    expect(hits('/script-ran') + hits('/onerror-ran')).toBe(0);
    expect(await page.title()).not.toBe('pwned');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'inbound-email');

    await page.getByRole('button', { name: 'Show remote images' }).click();
    await page.getByText('Remote images are shown.').waitFor();
    await expect.poll(() => hits('/pixel.png')).toBe(1);
    await page.waitForTimeout(300);
    expect(hits('/script-ran') + hits('/onerror-ran')).toBe(0);
    expect(await page.title()).not.toBe('pwned');

    // The raw message downloads as received.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download raw message' }).click()]);
    expect(download.suggestedFilename()).toMatch(/\.eml$/);

    // The webhook took it; retrying queues another delivery, and the deliveries page shows both, live.
    await expect.poll(() => hits('/hooks')).toBe(1);
    await page.getByRole('button', { name: 'Retry webhook delivery' }).click();
    await page.locator('.toast').filter({ hasText: 'queued again' }).waitFor();
    await expect.poll(() => hits('/hooks')).toBe(2);

    await page.goto(webhookUrl);
    const deliveries = page.getByRole('table', { name: 'Deliveries' });
    await expect.poll(() => deliveries.getByRole('row').filter({ hasText: 'succeeded' }).count()).toBe(2);
    // A receiver that now fails: the redelivery shows up live as failed… then retried.
    receiver.setFallback({ status: 500, body: 'down for maintenance' });
    await deliveries.getByRole('button', { name: /^Redeliver inbound.received/ }).first().click();
    await expect.poll(() => deliveries.getByRole('row').filter({ hasText: '(redelivery)' }).count()).toBe(1);
    await expect.poll(() => deliveries.getByRole('row').filter({ hasText: '(redelivery)' }).textContent(), { timeout: 10_000 }).toContain('500');
    await deliveries.getByRole('row').filter({ hasText: '(redelivery)' }).getByRole('button', { name: /^Attempts/ }).click();
    await page.getByRole('table', { name: /^Attempts of delivery/ }).getByText('down for maintenance').first().waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'webhook');
    receiver.setFallback({ status: 200, body: 'ok' });

    // Rotate: a new secret, shown once, different from the first.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = (await page.getByRole('group', { name: 'Webhook signing secret' }).locator('code').textContent())!.trim();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.content()).not.toContain(rotated);

    // What the browser reports is only what it refused inside the preview: its script, and (before the button) the image.
    const refusedInPreview = /^(Blocked script execution in 'http:\/\/[^']+\/preview\?images=(blocked|remote)' because the document's frame is sandboxed|Loading the image '[^']+' violates the following Content Security Policy directive: "img-src data:")/;
    expect(tab.errors.filter((e) => !refusedInPreview.test(e))).toEqual([]);
    expect(tab.foreignRequests.filter((u) => !u.endsWith('/pixel.png'))).toEqual([]);
  });
});
