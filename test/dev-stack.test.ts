// `pnpm dev` as a user runs it: the stack comes up, serves the API, stops
// cleanly on Ctrl-C, and a second start reuses the data of the first.
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, expect, test } from 'vitest';
import { freePort } from './support/global-setup.js';
import { reachableByPostgres } from '../edge/local/postgres.js';
import { eventually } from './support/wait.js';
import { apiCaller, killGroup, listening, ROOT, startPnpmDev } from './support/pnpm-dev.js';

// mkdtemp makes a private (0700) folder, like a checkout under /root: as root,
// PostgreSQL's data then has to live elsewhere, and restarts must find it.
const dataDir = mkdtempSync(`${ROOT}.data/dev-test-`);
afterAll(() => {
  if (process.getuid?.() === 0) rmSync(reachableByPostgres(`${dataDir}/pg`), { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * Ctrl-C: the whole process group gets SIGINT, as a terminal sends it. pnpm
 * itself dies of the signal; the stack's process stops everything and exits,
 * which closes the output pipes it shares with pnpm.
 */
async function stop(child: ChildProcess): Promise<number | null> {
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  process.kill(-child.pid!, 'SIGINT');
  const timer = setTimeout(() => killGroup(child), 20_000);
  const code = await closed;
  clearTimeout(timer);
  return code;
}

/**
 * A newcomer's first send, as the README walks it: a domain that verifies
 * against the stack's own DNS, a send, and the message in the capture
 * directory (no Internet here), DKIM-signed, with the email log saying sent.
 */
async function firstSend(url: string, admin: string) {
  const call = apiCaller(url);
  const { body: { user } } = await call('POST', '/api/v1/admin/users', admin, { email: 'newcomer@example.com' });
  const { body: { project } } = await call('POST', '/api/v1/admin/projects', admin, { name: 'first', owner_id: user.id });
  const { body: { token } } = await call('POST', '/api/v1/api-keys', admin, { name: 'sender', permissions: ['domains:write', 'domains:read', 'emails:write', 'emails:read'] }, project.id);
  const { status, body: { domain } } = await call('POST', '/api/v1/domains', token, { name: 'acme.test' });
  expect(status).toBe(201);
  const verified = await call('POST', `/api/v1/domains/${domain.id}/verify`, token);
  expect(verified.body.domain.status).toBe('verified');
  const sent = await call('POST', '/api/v1/emails/send', token, { from: 'Acme <hello@acme.test>', to: ['ann@example.org'], subject: 'First', html: '<p>It works.</p>' });
  expect(sent.status).toBe(201);
  const id = sent.body.emails[0].id as string;
  const eml = `${dataDir}/outbound-capture/${id}.eml`;
  const bytes = await eventually(async () => { try { return readFileSync(eml, 'utf8'); } catch { return ''; } }, (b) => b !== '', 15_000);
  expect(bytes).toMatch(/^DKIM-Signature: .*d=acme\.test/m);
  expect(bytes).toContain('Subject: First');
  const log = await eventually(() => call('GET', `/api/v1/emails/${id}`, token), (r) => r.body.email?.status === 'sent', 10_000);
  expect(log.body.email.smtp_reply).toBe(`250 captured to ${eml}`);
}

test('starts, serves, stops on Ctrl-C and restarts on the same data', async () => {
  const [pgPort, bridgePort, workerPort, inboundPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const env = {
    EDGEMAIL_DATA_DIR: dataDir, EDGEMAIL_PG_PORT: String(pgPort), EDGEMAIL_BRIDGE_PORT: String(bridgePort), EDGEMAIL_PORT: String(workerPort),
    EDGEMAIL_INBOUND_PORT: String(inboundPort), EDGEMAIL_SUBMISSION_PORT: '0',
  };
  const url = `http://127.0.0.1:${workerPort}`;

  // The console's build is fresh (the tests' global setup made it): `pnpm dev` writes nothing into it at start,
  // since each write makes wrangler restart the Worker and fail the requests in flight.
  const consoleIndex = `${ROOT}console/dist/index.html`;
  const builtAt = statSync(consoleIndex).mtimeMs;
  const first = await startPnpmDev(env);
  expect((await fetch(`${url}/health`)).status).toBe(200);
  // The binary finds the stack on its non-default ports from what pnpm dev recorded under the data directory.
  const cliEnv = { ...process.env, EDGEMAIL_DATA_DIR: dataDir };
  const { stdout: token } = await promisify(execFile)('pnpm', ['-s', 'edgemail', 'admin', 'create-credential', '--name', 'ops'], { cwd: ROOT, env: cliEnv });
  const users = await fetch(`${url}/api/v1/admin/users`, { headers: { authorization: `Bearer ${token.trim()}` } });
  expect(users.status).toBe(200);
  await firstSend(url, token.trim());

  await stop(first.child);
  expect(statSync(consoleIndex).mtimeMs).toBe(builtAt);
  expect(first.output()).not.toMatch(/error/i);
  // A clean Ctrl-C: no `ELIFECYCLE Command failed` from pnpm, no bridge complaint about PostgreSQL stopping.
  expect(first.output()).not.toMatch(/ELIFECYCLE|failed/i);
  // Random logins, readable by the owner alone, and never printed.
  const secrets = `${dataDir}/pg-credentials.json`;
  expect(statSync(secrets).mode & 0o777).toBe(0o600);
  const { app, superuser } = JSON.parse(readFileSync(secrets, 'utf8')) as Record<'app' | 'superuser', { password: string }>;
  for (const password of [app.password, superuser.password]) expect(first.output()).not.toContain(password);
  // Everything is down within a few seconds (PostgreSQL finishes its own shutdown).
  await eventually(async () => [await listening(workerPort), await listening(pgPort), await listening(bridgePort)], (open) => open.every((o) => !o), 10_000);

  // With the stack down, the binary says which server it tried, and why.
  const down = await promisify(execFile)('pnpm', ['-s', 'edgemail', 'admin', 'create-credential', '--name', 'late'], { cwd: ROOT, env: cliEnv })
    .then(() => null, (e: { code: number; stderr: string }) => e);
  expect(down?.code).toBe(1);
  expect(down?.stderr).toContain(`cannot reach PostgreSQL at 127.0.0.1:${pgPort}, the local stack's database on port ${pgPort} (recorded by pnpm dev in ${dataDir}/stack.json): nothing answers there (is pnpm dev running?)`);

  const second = await startPnpmDev(env);
  const again = await fetch(`${url}/api/v1/admin/users`, { headers: { authorization: `Bearer ${token.trim()}` } });
  expect(again.status).toBe(200); // the credential minted before the restart is still there
  await stop(second.child);
  await eventually(() => listening(pgPort), (open) => !open, 10_000);
}, 150_000);
