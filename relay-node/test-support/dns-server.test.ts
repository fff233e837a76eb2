import { promises as dns } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from './dns-server.js';

describe('test DNS server', () => {
  let server: TestDnsServer;
  let resolver: dns.Resolver;
  const long = `v=DKIM1; k=rsa; p=${'A'.repeat(1400)}`;

  beforeAll(async () => {
    server = await startDnsServer({
      'Example.TEST': { TXT: ['v=spf1 ip4:127.0.0.1 -all'], A: ['127.0.0.1'], MX: [{ preference: 10, exchange: 'mx.example.test' }] },
      'big.example.test': { TXT: [long] },
    });
    resolver = new dns.Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([server.address]);
  });
  afterAll(() => server.close());

  it('answers TXT, A and MX over UDP, names case-insensitive', async () => {
    expect(await resolver.resolveTxt('example.test')).toEqual([['v=spf1 ip4:127.0.0.1 -all']]);
    expect(await resolver.resolve4('EXAMPLE.test')).toEqual(['127.0.0.1']);
    expect(await resolver.resolveMx('example.test')).toEqual([{ priority: 10, exchange: 'mx.example.test' }]);
    expect(server.queries.udp).toBeGreaterThanOrEqual(3);
  });

  it('splits long TXT strings and serves answers too big for UDP over TCP', async () => {
    const tcpBefore = server.queries.tcp;
    const answer = await resolver.resolveTxt('big.example.test');
    expect(answer[0]!.join('')).toBe(long);
    expect(answer[0]!.length).toBeGreaterThan(1);
    expect(server.queries.tcp).toBeGreaterThan(tcpBefore);
  });

  it('answers NXDOMAIN for unknown names and NODATA for a missing type', async () => {
    await expect(resolver.resolveTxt('nowhere.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolver.resolve6('example.test')).rejects.toMatchObject({ code: 'ENODATA' });
  });

  it('changes records while running', async () => {
    server.set('later.test', { TXT: ['hello'] });
    expect(await resolver.resolveTxt('later.test')).toEqual([['hello']]);
    server.set('later.test', undefined);
    await expect(resolver.resolveTxt('later.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});
