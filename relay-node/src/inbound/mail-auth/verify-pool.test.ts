// The verification pool's deadline (relay_node.inbound.mail_auth_timeout):
// past it a message is kept with temperror verdicts, through the real
// listener; a worker stuck on the CPU is terminated and replaced, one merely
// waiting on DNS is not; and the worker starts under `node --import tsx`,
// the way `pnpm edgemail relay start` runs, as well as under vitest.
import { execFile } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInbound } from '../../../test-support/inbound-harness.js';
import { sendMessage } from '../../../test-support/smtp-client.js';
import { createAuthenticator } from './authenticate.js';
import { createDnsResolver } from './dns-resolver.js';
import { createVerifyPool, type VerifyPool } from './verify-pool.js';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const message = (subject: string) => `From: Ann <ann@slow.test>\r\nTo: <support@inbox.test>\r\nSubject: ${subject}\r\n\r\nHello.\r\n`;

describe('the verification deadline', () => {
  // A DNS server that never answers: every check waits until its deadline.
  let silent: Socket;
  let silentAddress: string;
  const pools: VerifyPool[] = [];
  beforeAll(async () => {
    silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    silentAddress = `127.0.0.1:${silent.address().port}`;
  });
  afterAll(async () => {
    silent?.close();
    await Promise.all(pools.map((p) => p.close()));
  });
  const pool = (options: Parameters<typeof createVerifyPool>[0]) => {
    const created = createVerifyPool(options);
    pools.push(created);
    return created;
  };

  it('keeps a message whose checks pass the deadline, with temperror verdicts, and answers 250', async () => {
    const verifier = pool({});
    const inbound = await startInbound({
      deps: {
        authenticate: createAuthenticator({
          resolver: createDnsResolver([silentAddress], { timeoutMs: 5000, tries: 3, cache: false }),
          mta: 'mx.edgemail.test',
          deadlineMs: 500,
          pool: verifier,
        }),
      },
    });
    try {
      const sent = await sendMessage({ port: inbound.port, from: 'ann@slow.test', to: 'support@inbox.test', message: message('slow-dns') });
      expect(sent.response).toMatch(/^250 /);
      const [kept] = inbound.store.messages;
      expect(kept!.data.toString()).toContain('Subject: slow-dns');
      expect(kept!.verdicts.auth).toEqual({ spf: 'temperror', dkim: 'temperror', dmarc: 'temperror', aligned: false, client_ip: '127.0.0.1' });
      expect(kept!.verdicts.headers).toContain('(checks took longer than 500 ms)');
      // A worker that was only waiting on DNS let go of the message when told: it is not replaced.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(verifier.stats()).toEqual({ started: 1, terminated: 0 });
    } finally {
      await inbound.close();
    }
  });

  it('terminates and replaces a worker stuck on the CPU; the next message is checked by a new one', async () => {
    const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
    const verifier = pool({ size: 1, abortGraceMs: 200, workerUrl: new URL('../../../test-support/stuck-verify-worker.ts', import.meta.url) });
    const verify = (helo: string, deadlineMs: number) =>
      verifier.verify({
        message: Readable.from([Buffer.from(message(helo))]),
        context: { ip: '192.0.2.1', helo, sender: 'ann@slow.test' },
        mta: 'mx.test',
        resolver: async () => [],
        deadlineMs,
        log: { warn: (message, fields) => warnings.push({ message, fields }) },
      });
    const stuck = await verify('spin', 300);
    expect(stuck.auth).toMatchObject({ spf: 'temperror', dkim: 'temperror', dmarc: 'temperror' });
    expect(stuck.headers).toContain('checks took longer than 300 ms');
    await expect.poll(() => verifier.stats(), { timeout: 5000 }).toEqual({ started: 1, terminated: 1 });
    expect(warnings).toEqual([{
      message: 'verification worker terminated',
      fields: { reason: 'the verification worker was terminated: it did not let go of a message within 200 ms', messages_in_flight: 0 },
    }]);

    // (Its deadline also covers starting the new worker, a few hundred ms under vitest.)
    const next = await verify('client.test', 10_000);
    expect(next.auth).toMatchObject({ spf: 'none', dkim: 'none', dmarc: 'none' });
    expect(verifier.stats()).toEqual({ started: 2, terminated: 1 });
  });

  it('starts its worker under `node --import tsx`, as `pnpm edgemail relay start` runs', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'relay-node/test-support/verify-once.ts'], { cwd: repoRoot });
    const verdicts = JSON.parse(stdout);
    // `neutral` can only come from mailauth having read the (unverifiable) signature in the worker.
    expect(verdicts.auth).toMatchObject({ spf: 'none', dkim: 'neutral', dmarc: 'none' });
    expect(verdicts.headers).toContain('Authentication-Results: mx.once.test;');
  });
});
