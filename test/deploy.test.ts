// The production configuration stays deployable: wrangler bundles the Worker
// and reports its bindings without uploading anything.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

test('wrangler deploy --dry-run bundles the Worker with its Durable Object binding', async () => {
  const { stdout, stderr } = await promisify(execFile)('pnpm', ['-s', 'edge:check-deploy'], {
    cwd: root,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' },
    timeout: 90_000,
  });
  const out = stdout + stderr;
  expect(out).toMatch(/env\.RATE_LIMITER \(RateLimiter\)\s+Durable Object/);
  expect(out).toMatch(/env\.MAIL_STORE \(edgemail-mail\)\s+R2 Bucket/);
  expect(out).toContain('--dry-run: exiting now.');
}, 120_000);
