// The web console in a real browser: Debian's Chromium driven by
// playwright-core (no browser download; CI installs the `chromium` package).
// Tests that need it skip, naming the missing browser, when none is found:
//
//   describe.skipIf(!chromiumPath)('console', () => { … })   (see skipWithoutChromium)
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { repoRoot } from '../../edge/local/edge-worker.js';
import { freePort } from '../../edge/local/free-port.js';
import { startTestStack, type StackOptions, type TestStack } from './stack.js';

/** `EDGEMAIL_CHROMIUM`, else Debian's (or Ubuntu's) Chromium, else undefined. */
export const chromiumPath: string | undefined = [process.env.EDGEMAIL_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser']
  .find((p): p is string => !!p && existsSync(p));

/** True (after one warning naming the browser) when the browser tests must skip. */
export function skipWithoutChromium(file: string): boolean {
  if (chromiumPath) return false;
  console.warn(`${file}: skipped: no Chromium found (/usr/bin/chromium; apt-get install -y chromium, or set EDGEMAIL_CHROMIUM)`);
  return true;
}

/** One headless Chromium for a test file; close it in afterAll. */
export function launchBrowser(): Promise<Browser> {
  if (!chromiumPath) throw new Error('no Chromium: guard the test with skipWithoutChromium()');
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    // As root (CI) Chromium's sandbox cannot start; /dev/shm is small in containers.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export interface ConsoleTab {
  context: BrowserContext;
  page: Page;
  /** Absolute URL of a console path on the stack's origin. */
  url(path: string): string;
  /** Every request the page made to an origin other than the stack's (must stay empty: no third-party requests). */
  foreignRequests: string[];
  /**
   * Console errors and uncaught exceptions of the page (a CSP violation shows up here); not the
   * browser's note for each 4xx answer, which the pages show themselves (a wrong password is a 401).
   */
  errors: string[];
}

/** A stack whose `server.public_url` is the origin the browser uses. */
export interface ConsoleStack extends TestStack {
  /** `http://localhost:<port>`: the public URL, and the origin to open the console on. */
  origin: string;
}

/**
 * A test stack on a port chosen first, with `server.public_url` = `http://localhost:<port>`, so
 * the browser's origin is the public URL: what passkeys (the RP ID is its host: `localhost`, a
 * secure context on plain http, where an IP address is no valid RP ID) and single sign-on (the
 * redirect URI) need. The session cookie is then `edgemail_session` (loopback http).
 */
export async function startConsoleStack(opts: StackOptions = {}): Promise<ConsoleStack> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const stack = await startTestStack({ ...opts, port, settings: { SERVICE_SERVER_PUBLIC_URL: origin, ...opts.settings } });
  return Object.assign(stack, { origin });
}

/** A fresh browser profile (no cookies) with one tab open on `path` of the stack's console. */
export async function openConsole(browser: Browser, stack: TestStack | ConsoleStack, path = '/', opts: { viewport?: { width: number; height: number } } = {}): Promise<ConsoleTab> {
  const context = await browser.newContext({ viewport: opts.viewport ?? DESKTOP, locale: 'en-US', timezoneId: 'UTC', reducedMotion: 'reduce' });
  // A step that does not happen fails in seconds, naming the step, rather than at the test's timeout.
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  const origin = 'origin' in stack ? stack.origin : new URL(stack.url).origin;
  const foreignRequests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:') && !u.startsWith('about:')) foreignRequests.push(u);
  });
  page.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  const url = (p: string) => `${origin}${p}`;
  await page.goto(url(path));
  return { context, page, url, foreignRequests, errors };
}

/** Signs in through the sign-in page as a person would, and waits for the signed-in layout. */
export async function signInThroughUi(page: Page, input: { email: string; password: string; totpCode?: () => string }): Promise<void> {
  await page.getByLabel('Email').fill(input.email);
  await page.getByLabel('Password').fill(input.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  if (input.totpCode) {
    const field = page.getByLabel('Code from your authenticator app');
    await field.waitFor();
    await field.fill(input.totpCode());
    await page.getByRole('button', { name: 'Verify' }).click();
  }
  // The signed-in layout (its Sign out button shows at every width; the nav folds away on a phone).
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation { id: string; impact: string | null; help: string; nodes: string[] }

/**
 * Runs axe-core in the page (evaluated through DevTools, so the page's CSP,
 * which allows no inline script, stays as it is) and returns the serious and
 * critical violations; `expect(await axeViolations(page)).toEqual([])`.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export const screenshotDir = join(repoRoot, 'docs/screenshots');

/** Writes `docs/screenshots/<name>.png` (the README shows them) and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const path = join(screenshotDir, `${name}.png`);
  await page.screenshot({ path, fullPage: false, animations: 'disabled' });
  return path;
}
