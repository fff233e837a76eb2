// The front in front of a real smtp-server, driven by nodemailer and by a raw
// socket: the proxied address must reach the session, and an untrusted peer's
// PROXY line must meet the SMTP parser.
import { connect, type AddressInfo, type Server } from 'node:net';
import { createTransport } from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openRaw, type RawSmtp } from '../../test-support/smtp-raw.js';
import { buildProxyV1, buildProxyV2 } from './build-proxy-header.js';
import { createProxyFront } from './proxy-front.js';

interface Received { remoteAddress: string; remotePort: number; body: string }

const received: Received[] = [];
const smtp = new SMTPServer({
  authOptional: true,
  disableReverseLookup: true,
  hideSTARTTLS: true,
  logger: false,
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      received.push({ remoteAddress: session.remoteAddress, remotePort: session.remotePort, body: Buffer.concat(chunks).toString() });
      callback();
    });
  },
});

const fronts: Server[] = [];
const clients: RawSmtp[] = [];
let trustedPort = 0;
let untrustedPort = 0;

async function listen(trusted: string[]): Promise<number> {
  const front = createProxyFront({ trusted, headerTimeoutMs: 2000, handOver: (socket, peer) => smtp.connect(socket, peer) });
  fronts.push(front);
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  return (front.address() as AddressInfo).port;
}

beforeAll(async () => {
  trustedPort = await listen(['127.0.0.0/8']);
  untrustedPort = await listen(['192.0.2.1']);
});

afterAll(async () => {
  for (const client of clients) client.close();
  for (const connection of smtp.connections) connection.close();
  await Promise.all(fronts.map((front) => new Promise((resolve) => front.close(resolve))));
});

/** Sends one message with nodemailer over a socket that first writes `header`. */
async function sendThrough(header: Buffer, text: string): Promise<Received> {
  const transport = createTransport({
    host: '127.0.0.1',
    port: trustedPort,
    ignoreTLS: true,
    getSocket(_options, callback) {
      const socket = connect({ port: trustedPort, host: '127.0.0.1' }, () => {
        socket.write(header);
        callback(null, { connection: socket });
      });
      socket.once('error', (err) => callback(err, undefined));
    },
  });
  try {
    await transport.sendMail({ from: 'a@example.test', to: 'b@example.test', subject: 'proxy', text });
  } finally {
    transport.close();
  }
  const message = received.find((r) => r.body.includes(text));
  if (!message) throw new Error('message not received');
  return message;
}

describe('trusted balancer', () => {
  test.each([
    ['v1 TCP4', buildProxyV1({ source: '203.0.113.7', destination: '10.0.0.1', sourcePort: 40000, destinationPort: 25 }), '203.0.113.7', 40000],
    ['v2 IPv4', buildProxyV2({ command: 'proxy', endpoints: { source: '198.51.100.2', destination: '10.0.0.1', sourcePort: 40002, destinationPort: 25 } }), '198.51.100.2', 40002],
    ['v2 IPv6', buildProxyV2({ command: 'proxy', endpoints: { source: '2001:db8::7', destination: '2001:db8::1', sourcePort: 40003, destinationPort: 25 } }), '2001:db8::7', 40003],
  ])('%s: the client address reaches session.remoteAddress', async (name, header, address, port) => {
    const message = await sendThrough(header, `body for ${name}`);
    expect(message).toMatchObject({ remoteAddress: address, remotePort: port });
  });

  test('v2 LOCAL (a health check): the session is the balancer itself', async () => {
    const message = await sendThrough(buildProxyV2({ command: 'local' }), 'body for LOCAL');
    expect(message.remoteAddress).toBe('127.0.0.1');
  });
});

describe('untrusted peer', () => {
  test('is never asked for a header: its PROXY line is an unknown command (500)', async () => {
    const raw = await openRaw(untrustedPort);
    clients.push(raw);
    expect(await raw.reply()).toMatch(/^220 /);
    raw.write(buildProxyV1({ source: '203.0.113.66', destination: '10.0.0.1', sourcePort: 1, destinationPort: 25 }));
    expect(await raw.reply()).toMatch(/^500 /);
    for (const [command, code] of [['EHLO peer.test', 250], ['MAIL FROM:<a@example.test>', 250], ['RCPT TO:<b@example.test>', 250], ['DATA', 354]] as const) {
      expect(await raw.command(command)).toMatch(new RegExp(`^${code}[ -]`));
    }
    raw.write('Subject: untrusted\r\n\r\nfrom the untrusted peer\r\n.\r\n');
    expect(await raw.reply()).toMatch(/^250 /);
    expect(received.find((r) => r.body.includes('from the untrusted peer'))?.remoteAddress).toBe('127.0.0.1');
  });
});
