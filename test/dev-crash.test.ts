// A 250 is a promise, also on the stack users run: mail streams into `pnpm dev`
// over several sessions, the whole process group (pnpm, the stack, PostgreSQL,
// the bridge, workerd, the relay node) is SIGKILLed once half of it has been
// answered 250 (at the moment the edge has just acknowledged a forward: the
// node drops its spool copy then, so only the edge's commit holds the message),
// the stack starts again on the same data, and every message that got its 250
// is stored exactly once.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, watch } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, test } from 'vitest';
import { freePort } from './support/global-setup.js';
import { reachableByPostgres } from '../edge/local/postgres.js';
import { eventually } from './support/wait.js';
import { apiCaller, killGroup, listening, ROOT, startPnpmDev } from './support/pnpm-dev.js';
import { openSession, sendMessage } from '../relay-node/test-support/smtp-client.js';
import { spoolDir } from '../relay-node/src/state/index.js';

const dataDir = mkdtempSync(`${ROOT}.data/dev-crash-`);
afterAll(() => {
  if (process.getuid?.() === 0) rmSync(reachableByPostgres(`${dataDir}/pg`), { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

const SESSIONS = 6;
const PER_SESSION = 10;
const KILL_AFTER = (SESSIONS * PER_SESSION) / 2;

const message = (subject: string) =>
  `From: ann@example.org\r\nTo: support@crash.test\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@example.org>\r\n\r\nBody of ${subject}.\r\n`;

test('every message answered 250 before a SIGKILL of the whole stack is stored exactly once after restart', async () => {
  const [pgPort, bridgePort, workerPort, inboundPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const env = {
    EDGEMAIL_DATA_DIR: dataDir, EDGEMAIL_PG_PORT: String(pgPort), EDGEMAIL_BRIDGE_PORT: String(bridgePort), EDGEMAIL_PORT: String(workerPort),
    EDGEMAIL_INBOUND_PORT: String(inboundPort), EDGEMAIL_SUBMISSION_PORT: '0',
  };
  const url = `http://127.0.0.1:${workerPort}`;
  let child = (await startPnpmDev(env, { silent: true })).child;
  try {
    const { stdout } = await promisify(execFile)('pnpm', ['-s', 'edgemail', 'admin', 'create-credential', '--name', 'ops'], { cwd: ROOT, env: { ...process.env, ...env } });
    const admin = stdout.trim();
    const call = apiCaller(url);
    const { body: { user } } = await call('POST', '/api/v1/admin/users', admin, { email: 'crash@example.com' });
    const { body: { project } } = await call('POST', '/api/v1/admin/projects', admin, { name: 'crash', owner_id: user.id });
    const { body: { token } } = await call('POST', '/api/v1/api-keys', admin, { name: 'inbox', permissions: ['domains:write', 'domains:read', 'inbound:read'] }, project.id);
    const { body: { domain } } = await call('POST', '/api/v1/domains', token, { name: 'crash.test' });
    // pnpm dev answers DNS for its own domains, so ownership is proven at once.
    expect((await call('POST', `/api/v1/domains/${domain.id}/verify`, token)).body.domain.status).toBe('verified');
    // The node learns the domain on its next refresh: until then RCPT is refused.
    await eventually(() => sendMessage({ port: inboundPort, from: 'ann@example.org', to: 'support@crash.test', message: message('warm-up') }),
      (r) => r.response?.startsWith('250') === true, 45_000);

    const accepted: string[] = [];
    const attempted: string[] = [];
    let killed = false;
    const kill = () => { if (!killed) { killed = true; killGroup(child); } };
    // Once half are accepted, everything dies at once, as a power cut would take
    // it, right as the node forgets a message the edge has just acknowledged
    // (or after 2 s if no acknowledgement comes).
    const spool = spoolDir(`${dataDir}/relay-node`);
    const watcher = watch(spool, (_event, file) => {
      if (accepted.length >= KILL_AFTER && file?.endsWith('.eml') && !existsSync(join(spool, file))) kill();
    });
    const stream = async (s: number) => {
      const session = await openSession({ port: inboundPort });
      for (let i = 0; i < PER_SESSION && !killed; i++) {
        const subject = `crash-${s}-${i}`;
        attempted.push(subject);
        const result = await session.send({ from: 'ann@example.org', to: 'support@crash.test' }, message(subject));
        if (!result.response?.startsWith('250')) break;
        accepted.push(subject);
        if (accepted.length === KILL_AFTER) setTimeout(kill, 2_000);
      }
      session.quit();
    };
    await Promise.all(Array.from({ length: SESSIONS }, (_, s) => stream(s).catch(() => undefined)));
    watcher.close();
    expect(killed).toBe(true);
    expect(accepted.length).toBeGreaterThanOrEqual(KILL_AFTER);
    await eventually(async () => [await listening(workerPort), await listening(pgPort), await listening(inboundPort)], (open) => open.every((o) => !o), 10_000);

    child = (await startPnpmDev(env, { silent: true })).child;
    const stored = async () => {
      const subjects: string[] = [];
      let page = await call('GET', '/api/v1/inbound-emails?limit=200', token);
      for (;;) {
        // A 401 here means the key itself did not survive the crash.
        expect(page.status, JSON.stringify(page.body)).toBe(200);
        subjects.push(...page.body.inbound_emails.map((e: { subject: string }) => e.subject));
        const last = page.body.inbound_emails.at(-1);
        if (page.body.inbound_emails.length < 200 || !last) return subjects;
        page = await call('GET', `/api/v1/inbound-emails?limit=200&before=${encodeURIComponent(last.received_at)}&before_id=${last.id}`, token);
      }
    };
    // The node forwards what its spool still holds once the edge is back.
    // Polled once a second: the API's own rate limit is 120 requests a minute.
    let subjects = await stored();
    for (const deadline = Date.now() + 60_000; !accepted.every((a) => subjects.includes(a)) && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 1_000));
      subjects = await stored();
    }
    expect(accepted.filter((a) => !subjects.includes(a)), 'answered 250, then lost').toEqual([]);
    for (const subject of accepted) expect(subjects.filter((s) => s === subject), subject).toHaveLength(1);
    // Messages cut off before their 250 may or may not be there, but never twice.
    for (const subject of attempted) expect(subjects.filter((s) => s === subject).length).toBeLessThanOrEqual(1);
  } finally {
    killGroup(child);
  }
}, 240_000);
