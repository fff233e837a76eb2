import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDkimKey, signMessage, type DkimKey } from '../../../test-support/dkim.js';
import { startDnsServer, type TestDnsServer } from '../../../test-support/dns-server.js';
import { startInbound, type RunningInbound } from '../../../test-support/inbound-harness.js';
import { sendMessage } from '../../../test-support/smtp-client.js';

const message = (from: string) =>
  `From: <${from}>\r\nTo: <b@inbox.test>\r\nSubject: verdicts\r\nMessage-ID: <${Date.now()}.${Math.random()}@x>\r\n\r\nHello.\r\n`;

describe('inbound listener verdicts', () => {
  let dns: TestDnsServer;
  let key: DkimKey;
  let inbound: RunningInbound;

  beforeAll(async () => {
    key = generateDkimKey('example.test');
    dns = await startDnsServer({
      'example.test': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
      '_dmarc.example.test': { TXT: ['v=DMARC1; p=reject'] },
      [key.recordName]: { TXT: [key.record] },
      'proxied.test': { TXT: ['v=spf1 ip4:198.51.100.20 -all'] },
    });
    inbound = await startInbound({ dnsServer: dns.address, options: { ratePerMinute: 2 } });
  });
  afterAll(async () => {
    await inbound?.close();
    await dns?.close();
  });

  it('stamps pass verdicts on signed mail from a listed address', async () => {
    const result = await sendMessage({ port: inbound.port, from: 'a@example.test', to: 'b@inbox.test', message: await signMessage(message('a@example.test'), key) });
    expect(result.response).toMatch(/^250 /);
    expect(inbound.store.messages.at(-1)!.verdicts.auth).toEqual({ spf: 'pass', dkim: 'pass', dmarc: 'pass', aligned: true, client_ip: '127.0.0.1' });
  });

  it('refuses a DMARC failure on a p=reject domain with 550 5.7.1 and keeps the record', async () => {
    const before = inbound.store.messages.length;
    const result = await sendMessage({ port: inbound.port, localAddress: '127.0.0.5', from: 'a@example.test', to: 'b@inbox.test', message: message('a@example.test') });
    expect(result.error?.response).toBe('550 5.7.1 Message refused: it fails DMARC and the sender domain publishes p=reject');
    expect(inbound.store.messages).toHaveLength(before + 1);
    const kept = inbound.store.messages.at(-1)!;
    expect(kept.verdicts.auth).toEqual({ spf: 'fail', dkim: 'none', dmarc: 'fail', aligned: false, client_ip: '127.0.0.5' });
    expect(kept.verdicts.dmarcReject).toBe(true);
  });

  describe('behind a front that hands sockets over with the client address (PROXY)', () => {
    let front: Server;
    let frontPort: number;
    beforeAll(async () => {
      front = createServer((socket) => inbound.server.connect(socket, { remoteAddress: '198.51.100.20', remotePort: 40_000 }));
      await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', () => resolve()));
      frontPort = (front.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => front.close(() => resolve())));

    it('uses the handed-over address for SPF, client_ip and the session rate', async () => {
      const send = () => sendMessage({ port: frontPort, from: 'a@proxied.test', to: 'b@inbox.test', message: message('a@proxied.test') });
      const first = await send();
      expect(first.response).toMatch(/^250 /);
      expect(inbound.store.messages.at(-1)!.envelope).toMatchObject({ clientAddress: '198.51.100.20', clientPort: 40_000 });
      expect(inbound.store.messages.at(-1)!.verdicts.auth).toMatchObject({ spf: 'pass', client_ip: '198.51.100.20' });
      expect((await send()).response).toMatch(/^250 /);
      // The third session from the same handed-over address is past the limit of 2 ...
      expect((await send()).error?.response).toMatch(/^421 4\.7\.0 /);
      // ... while direct sessions from 127.0.0.1 are counted apart.
      const direct = await sendMessage({ port: inbound.port, from: 'a@example.test', to: 'b@inbox.test', message: await signMessage(message('a@example.test'), key) });
      expect(direct.response).toMatch(/^250 /);
    });
  });
});
