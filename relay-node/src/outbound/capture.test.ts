// `outbound.capture_dir`: the signed message lands in a file, nothing touches
// the network (no DNS question, no SMTP connection), one log line names the file.
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../test-support/dns-server.js';
import { createDnsResolver } from '../inbound/mail-auth/dns-resolver.js';
import type { Log } from '../log.js';
import { captureMessage } from './capture.js';
import { processJob, type ProcessJobDeps } from './process-job.js';
import { makeDkimKey, makeJob } from '../../test-support/jobs.js';
import { startReceiver, type Receiver } from '../../test-support/receiver.js';

const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
const log: Log = {
  debug: (message, fields) => lines.push({ level: 'debug', message, fields }),
  info: (message, fields) => lines.push({ level: 'info', message, fields }),
  warn: (message, fields) => lines.push({ level: 'warn', message, fields }),
  error: (message, fields) => lines.push({ level: 'error', message, fields }),
};

let dir: string;
let dns: TestDnsServer;
let receiver: Receiver;
let deps: ProcessJobDeps;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgemail-capture-'));
  receiver = await startReceiver();
  dns = await startDnsServer({ 'dest.test': { MX: [{ preference: 10, exchange: 'mx.dest.test' }] }, 'mx.dest.test': { A: ['127.0.0.1'] } });
  deps = {
    settings: { captureDir: join(dir, 'outbound-capture'), smarthost: '', mxPort: receiver.port, requireTls: false },
    resolve: createDnsResolver([dns.address], { cache: false }),
    hostName: 'relay.acme.test',
    log,
  };
});

afterAll(async () => {
  await receiver?.close();
  await dns?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('MX route: the signed bytes go to <capture_dir>/<email_id>.eml, reported sent; no DNS, no SMTP', async () => {
  const job = makeJob('ann@dest.test', { dkim: makeDkimKey('ed25519').dkim });
  const result = await processJob(job, deps);
  const path = join(dir, 'outbound-capture', `${job.email_id}.eml`);
  expect(result).toMatchObject({ outcome: 'sent', smtp_code: 250, reply: `250 captured to ${path}`, server: `capture:${path}` });
  const bytes = await readFile(path, 'utf8');
  expect(bytes.split('\r\n')[0]).toMatch(/^DKIM-Signature: .*a=ed25519-sha256/);
  expect(bytes).toContain(`Message-ID: ${job.message.message_id}`);
  expect(dns.queries.udp + dns.queries.tcp).toBe(0);
  expect(receiver.connections).toBe(0);
  const said = lines.filter((l) => l.fields?.email_id === job.email_id);
  expect(said).toEqual([{ level: 'debug', message: 'outbound message captured', fields: { email_id: job.email_id, to: 'ann@dest.test', file: path } }]);
});

test('a configured SMTP server still gets its mail: capture stands in for MX delivery only', async () => {
  const job = makeJob('ann@example.org', { route: { kind: 'smtp', source: 'pool', host: '127.0.0.1', port: receiver.port, security: 'none', username: null, password: null } });
  const result = await processJob(job, deps);
  // The pool's host stays in the node's log; the tenant's record names the pool only (shared-pool.test.ts).
  expect(result).toMatchObject({ outcome: 'sent', server: 'shared pool' });
  expect(receiver.connections).toBe(1);
  await expect(readFile(join(dir, 'outbound-capture', `${job.email_id}.eml`))).rejects.toThrow(/ENOENT/);
});

test('written atomically: a repeat replaces the file whole, no temp file stays', async () => {
  const target = join(dir, 'atomic');
  const first = await captureMessage(target, 'same-id', Buffer.from('first\r\n'));
  const second = await captureMessage(target, 'same-id', Buffer.from('second\r\n'));
  expect(second).toBe(first);
  expect(await readFile(first, 'utf8')).toBe('second\r\n');
  expect(await readdir(target)).toEqual(['same-id.eml']);
  expect((await stat(first)).mode & 0o777).toBe(0o600);
});

test('an id that would leave the directory is refused; the job is deferred, not lost', async () => {
  await expect(captureMessage(dir, '../escape', Buffer.from('x'))).rejects.toThrow(/cannot name a capture file/);
  const result = await processJob(makeJob('ann@dest.test', { email_id: '../../etc/x' }), deps);
  expect(result).toMatchObject({ outcome: 'deferred', server: null });
  expect(result.reply).toMatch(/^relay node error: /);
});
