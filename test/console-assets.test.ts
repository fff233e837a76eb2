// The web console is served by the Worker's own origin as static assets
// (wrangler.toml [assets], docs/console-ui.md "How it is served"): every page
// and file carries the strict CSP and the usual headers, the HTML holds no
// inline script or style, and every path the Worker answers reaches it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestStack, type TestStack } from './support/stack.js';

const root = join(import.meta.dirname, '..');
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; frame-src 'self'; child-src 'self'; worker-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'";

/** run_worker_first of wrangler.toml, as patterns (`/api/*` → /^\/api\/.*$/). */
function workerFirst(): RegExp[] {
  const line = readFileSync(join(root, 'wrangler.toml'), 'utf8').match(/^run_worker_first\s*=\s*(\[.*\])$/m);
  if (!line?.[1]) throw new Error('wrangler.toml has no run_worker_first list');
  return (JSON.parse(line[1]) as string[]).map((p) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`));
}

/** Every route path declared under edge/src/routes (`path: '/…'`), with its parameters filled in. */
function declaredPaths(): string[] {
  const paths = new Set<string>(['/health', '/api/v1/openapi.json']);
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.name.endsWith('.ts')) for (const m of readFileSync(full, 'utf8').matchAll(/\bpath: '(\/[^']*)'/g)) paths.add(m[1]!.replace(/\{[^}]+\}/g, 'x'));
    }
  };
  visit(join(root, 'edge/src/routes'));
  return [...paths];
}

test('every path the Worker declares is answered by the Worker, not the console', () => {
  const patterns = workerFirst();
  const paths = declaredPaths();
  expect(paths.length).toBeGreaterThan(100);
  expect(paths.filter((p) => !patterns.some((re) => re.test(p)))).toEqual([]);
  // And the console's own pages are not.
  for (const page of ['/', '/sign-in', '/emails', '/app/invitation', '/app/password-reset']) expect(patterns.some((re) => re.test(page)), page).toBe(false);
});

describe('served by the stack', () => {
  let stack: TestStack;
  beforeAll(async () => { stack = await startTestStack(); });
  afterAll(async () => { await stack?.stop(); });

  const get = (path: string) => fetch(`${stack.url}${path}`, { headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' } });

  test('every page, the mailed links included, is the app with the strict CSP and no inline script or style', async () => {
    let html = '';
    for (const path of ['/', '/sign-in', '/emails', '/emails/0b7c1d2e-0000-4000-8000-000000000000', '/app/invitation', '/app/password-reset']) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy'), path).toBe(CSP);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      html = await res.text();
      expect(html, path).toContain('<div id="app">');
    }
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\bsrc="\/assets\/[^"]+\.js"/);
      expect(body!.trim()).toBe('');
    }
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=|javascript:/i);
    // Nothing from another origin: every src and href is a path on this site.
    for (const [, url] of html.matchAll(/\s(?:src|href)="([^"]*)"/g)) expect(url).toMatch(/^\/(?!\/)/);

    // The script and stylesheet it names carry the same headers, with their own types.
    const asset = html.match(/src="(\/assets\/[^"]+\.js)"/)![1]!;
    const js = await fetch(`${stack.url}${asset}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(js.headers.get('content-security-policy')).toBe(CSP);
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await js.text()).not.toMatch(/\beval\(|new Function\(/);
  });

  test('the Worker still answers its own paths under the console (JSON, not the app)', async () => {
    const session = await get('/app/api/session');
    expect(session.status).toBe(401);
    expect(session.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await session.json()).toEqual({ error: expect.any(String) });
    const health = await get('/health');
    expect(await health.json()).toEqual({ status: 'ok' });
    // An unknown API path is the API's JSON refusal (authentication comes first), never the app's page.
    const unknownApi = await get('/api/v1/no-such-thing');
    expect(unknownApi.status).toBe(401);
    expect(unknownApi.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
