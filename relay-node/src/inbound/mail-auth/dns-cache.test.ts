// The DNS answer cache against the real test DNS server (its query counter
// says what reached the wire), and a silent UDP socket for timeouts.
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../../test-support/dns-server.js';
import { createDnsResolver } from './dns-resolver.js';

let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer({
    'sender.test': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
    '_dmarc.sender.test': { TXT: ['v=DMARC1; p=none'] },
    'mx.sender.test': { A: ['192.0.2.1'] },
  });
});
afterAll(() => dns?.close());

/** Queries the server answered since `before` (UDP and TCP). */
const asked = (before: number) => dns.queries.udp + dns.queries.tcp - before;
const count = () => dns.queries.udp + dns.queries.tcp;

describe('cachingResolver (through createDnsResolver)', () => {
  it('asks once for the same name and type, whatever the case, and hands each caller its own copy', async () => {
    const resolve = createDnsResolver([dns.address]);
    const before = count();
    const first = (await resolve('sender.test', 'TXT')) as string[][];
    expect(first).toEqual([['v=spf1 ip4:127.0.0.1 -all']]);
    first[0]![0] = 'changed by a caller';
    expect(await resolve('Sender.TEST', 'TXT')).toEqual([['v=spf1 ip4:127.0.0.1 -all']]);
    expect(asked(before)).toBe(1);
    // Another type of the same name is another question.
    await expect(resolve('sender.test', 'A')).rejects.toMatchObject({ code: 'ENODATA' });
    expect(asked(before)).toBe(2);
  });

  it('shares one lookup between concurrent questions (ten messages from one sender)', async () => {
    const resolve = createDnsResolver([dns.address]);
    const before = count();
    const answers = await Promise.all(Array.from({ length: 10 }, () => resolve('_dmarc.sender.test', 'TXT')));
    expect(new Set(answers.map((a) => JSON.stringify(a)))).toEqual(new Set([JSON.stringify([['v=DMARC1; p=none']])]));
    expect(asked(before)).toBe(1);
  });

  it('keeps an answer at most maxAgeMs, a negative one at most negativeMaxAgeMs', async () => {
    let clock = 1_000_000;
    const resolve = createDnsResolver([dns.address], { cache: { maxAgeMs: 60_000, negativeMaxAgeMs: 5_000, now: () => clock } });
    const before = count();
    await resolve('mx.sender.test', 'A');
    await expect(resolve('later.sender.test', 'TXT')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    dns.set('later.sender.test', { TXT: ['v=spf1 -all'] });
    dns.set('mx.sender.test', { A: ['192.0.2.2'] });
    clock += 4_000;
    await expect(resolve('later.sender.test', 'TXT')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(await resolve('mx.sender.test', 'A')).toEqual(['192.0.2.1']);
    expect(asked(before)).toBe(2);
    clock += 2_000; // the negative answer is 6 s old
    expect(await resolve('later.sender.test', 'TXT')).toEqual([['v=spf1 -all']]);
    expect(await resolve('mx.sender.test', 'A')).toEqual(['192.0.2.1']);
    clock += 55_000; // the A answer is 61 s old
    expect(await resolve('mx.sender.test', 'A')).toEqual(['192.0.2.2']);
    expect(asked(before)).toBe(4);
    dns.set('later.sender.test', undefined);
    dns.set('mx.sender.test', { A: ['192.0.2.1'] });
  });

  it('drops the oldest answers past maxEntries', async () => {
    const resolve = createDnsResolver([dns.address], { cache: { maxEntries: 2 } });
    const before = count();
    await resolve('sender.test', 'TXT');
    await resolve('_dmarc.sender.test', 'TXT');
    await resolve('mx.sender.test', 'A'); // pushes out sender.test
    await resolve('_dmarc.sender.test', 'TXT');
    await resolve('mx.sender.test', 'A');
    expect(asked(before)).toBe(3);
    await resolve('sender.test', 'TXT');
    expect(asked(before)).toBe(4);
  });

  it('cache: false asks every time', async () => {
    const resolve = createDnsResolver([dns.address], { cache: false });
    const before = count();
    await resolve('sender.test', 'TXT');
    await resolve('sender.test', 'TXT');
    expect(asked(before)).toBe(2);
  });

  describe('when DNS does not answer', () => {
    let silent: Socket;
    let received = 0;
    let silentAddress = '';
    beforeAll(async () => {
      silent = createSocket('udp4'); // swallows every query, counting them
      silent.on('message', () => { received++; });
      await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', () => resolve()));
      silentAddress = `127.0.0.1:${silent.address().port}`;
    });
    afterAll(() => silent.close());

    it('never keeps a timeout: the next message asks again', async () => {
      const resolve = createDnsResolver([silentAddress], { timeoutMs: 100, tries: 1 });
      await expect(resolve('sender.test', 'TXT')).rejects.toMatchObject({ code: 'ETIMEOUT' });
      const afterFirst = received;
      expect(afterFirst).toBeGreaterThan(0);
      await expect(resolve('sender.test', 'TXT')).rejects.toMatchObject({ code: 'ETIMEOUT' });
      expect(received).toBeGreaterThan(afterFirst);
    });
  });
});
