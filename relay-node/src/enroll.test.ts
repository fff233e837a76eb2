import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { enrollNode, isLoopbackHost } from './enroll.js';

const dir = mkdtempSync(join(tmpdir(), 'enroll-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('isLoopbackHost', () => {
  it('is 127.0.0.0/8, ::1 and localhost, as URL writes their hosts', () => {
    for (const url of ['http://127.0.0.1:8787', 'http://127.1.2.3', 'http://[::1]:8787', 'http://localhost:8787', 'http://LOCALHOST', 'http://[::ffff:127.0.0.1]']) {
      expect(isLoopbackHost(new URL(url).hostname), url).toBe(true);
    }
  });

  it('is nothing else: private, link-local, any other name', () => {
    for (const url of ['http://10.0.0.1', 'http://192.168.1.1', 'http://169.254.1.1', 'http://[fd00::1]', 'http://0.0.0.0', 'http://localhost.example.com', 'http://127.0.0.1.nip.io', 'http://mail.example.com']) {
      expect(isLoopbackHost(new URL(url).hostname), url).toBe(false);
    }
  });
});

describe('enrollNode over plain http', () => {
  it('refuses a host that is not loopback before any request, leaving the state directory empty', async () => {
    let requests = 0;
    const counting = (async () => { requests++; return new Response('{}', { status: 500 }); }) as typeof fetch;
    await expect(enrollNode({ edgeUrl: 'http://10.1.2.3:8787', key: 'myk_x', stateDir: dir, fetch: counting }))
      .rejects.toThrow('--edge http://10.1.2.3:8787 is plain http: the key and the node credential would cross the network unencrypted; use https:// (http:// is allowed only for loopback: 127.0.0.0/8, ::1, localhost)');
    expect(requests).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });
});
