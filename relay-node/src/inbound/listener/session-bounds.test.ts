// The bounds of a session on the real listener, over real sockets: what one
// client (or all of them) may hold open, for how long, and how much it may do
// in one session. Each attack is shown refused with its exact reply, the
// session closed, and its place given back.
import { createWriteStream, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { connect } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSpoolStore } from '../spool-store/spool-store.js';
import type { SpooledMeta } from '../spool-store/spooled-message.js';
import { buildProxyV1 } from '../../proxy/build-proxy-header.js';
import { openSpool } from '../../spool/index.js';
import { listen, type RunningListener } from '../../server.js';
import { createSessionSlots } from '../../smtp/session-slots.js';
import { collectingLog, createTestInbound, startInbound, type RunningInbound } from '../../../test-support/inbound-harness.js';
import { selfSignedCertificate, type CertificatePair } from '../../../test-support/self-signed.js';
import { sendMessage } from '../../../test-support/smtp-client.js';
import { openRaw, openRawAtData, toDataPrompt, type RawSmtp } from '../../../test-support/smtp-raw.js';

const MESSAGE = 'From: a@sender.test\r\nTo: b@inbox.test\r\nSubject: bounds\r\n\r\nHello.\r\n';
const TOO_MANY_ON_SERVER = '421 4.7.0 Too many open sessions on this server, try again later';
const TOO_MANY_FROM_ADDRESS = '421 4.7.0 Too many open sessions from your address, try again later';

/** A session greeted with 220 (from `localAddress`, 127.0.0.1 by default). */
async function greeted(port: number, localAddress?: string): Promise<RawSmtp> {
  const raw = await openRaw(port, { localAddress });
  expect(await raw.reply()).toMatch(/^220 /);
  return raw;
}

/** The one reply a refused session gets before the server closes it. */
async function refusedWith(port: number, localAddress?: string): Promise<string> {
  const raw = await openRaw(port, { localAddress });
  const reply = await raw.reply();
  await raw.closed;
  return reply;
}

describe('session bounds on the inbound listener', () => {
  let inbound: RunningInbound | undefined;
  afterEach(async () => {
    await inbound?.close();
    inbound = undefined;
  });

  it('refuses a session past max_sessions with 421 4.7.0 and closes it; a closed session frees its place', async () => {
    inbound = await startInbound({ options: { maxSessions: 2 } });
    const [a, b] = [await greeted(inbound.port, '127.0.0.2'), await greeted(inbound.port, '127.0.0.3')];
    expect(await refusedWith(inbound.port, '127.0.0.4')).toBe(TOO_MANY_ON_SERVER);
    expect(inbound.server.openSessions()).toBe(2);
    a.write('QUIT\r\n');
    await a.closed;
    await expect.poll(() => inbound!.server.openSessions()).toBe(1);
    const c = await greeted(inbound.port, '127.0.0.4');
    expect(await refusedWith(inbound.port, '127.0.0.5')).toBe(TOO_MANY_ON_SERVER);
    b.close();
    c.close();
  });

  it('refuses one address past max_sessions_per_ip with 421 4.7.0; other addresses are unaffected', async () => {
    inbound = await startInbound({ options: { maxSessionsPerIp: 2 } });
    const held = [await greeted(inbound.port, '127.0.0.2'), await greeted(inbound.port, '127.0.0.2')];
    expect(await refusedWith(inbound.port, '127.0.0.2')).toBe(TOO_MANY_FROM_ADDRESS);
    const other = await greeted(inbound.port, '127.0.0.3');
    // The sessions held still work: the cap refuses new ones only.
    expect(await held[0]!.command('NOOP')).toMatch(/^250 /);
    held[1]!.close();
    await expect.poll(() => inbound!.server.openSessions('127.0.0.2')).toBe(1);
    expect((await sendMessage({ port: inbound.port, localAddress: '127.0.0.2', from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE })).response).toMatch(/^250 /);
    held[0]!.close();
    other.close();
  });

  it('holds the caps across two ports that share one count (a node\'s port 25 and its implicit-TLS port)', async () => {
    const sessionSlots = createSessionSlots({ maxSessions: 0, maxPerAddress: 1 });
    inbound = await startInbound({ options: { sessionSlots } });
    const second = await startInbound({ options: { sessionSlots } });
    try {
      const held = await greeted(inbound.port, '127.0.0.2');
      expect(await refusedWith(second.port, '127.0.0.2')).toBe(TOO_MANY_FROM_ADDRESS);
      held.close();
      await expect.poll(() => second.server.openSessions('127.0.0.2')).toBe(0);
      (await greeted(second.port, '127.0.0.2')).close();
    } finally {
      await second.close();
    }
  });

  it('gives every place back however sessions end: killed before the greeting, mid-data, after QUIT, refused', async () => {
    inbound = await startInbound({ options: { maxSessions: 4, maxSessionsPerIp: 2 } });
    for (let round = 0; round < 5; round++) {
      const silent = await openRaw(inbound.port);
      silent.close(); // gone before even reading the greeting
      const cut = await openRawAtData(inbound.port);
      cut.write('Subject: cut\r\n\r\nhalf a mess');
      const quitting = await greeted(inbound.port);
      await quitting.command('QUIT');
      await quitting.closed;
      await expect.poll(() => inbound!.server.openSessions()).toBe(1); // the server sees the close a moment after the client
      const idle = await greeted(inbound.port); // with `cut`, the address's two places
      expect(await refusedWith(inbound.port)).toBe(TOO_MANY_FROM_ADDRESS); // the refused one holds nothing
      cut.close();
      idle.close();
      await expect.poll(() => inbound!.server.openSessions()).toBe(0);
    }
    // The caps admit exactly as many as before.
    const again = [await greeted(inbound.port), await greeted(inbound.port)];
    expect(await refusedWith(inbound.port)).toBe(TOO_MANY_FROM_ADDRESS);
    for (const raw of again) raw.close();
  });

  it('closes a session idle past idle_timeout with 421 4.4.2', async () => {
    inbound = await startInbound({ options: { idleTimeoutMs: 300 } });
    const raw = await greeted(inbound.port);
    expect(await raw.command('EHLO client.test')).toMatch(/^250/);
    expect(await raw.reply(3000)).toBe('421 4.4.2 Timeout - closing connection');
    await raw.closed;
    await expect.poll(() => inbound!.server.openSessions()).toBe(0);
  });

  it('ends a session past max_session_duration with 421 4.4.2, even one that keeps talking', async () => {
    inbound = await startInbound({ options: { maxSessionDurationMs: 600 } });
    const raw = await greeted(inbound.port);
    let reply = '';
    // NOOP every 100 ms: never idle, and no NOOP cap on this listener.
    for (let i = 0; i < 30 && !reply.startsWith('421'); i++) {
      reply = await raw.command('NOOP');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(reply).toBe('421 4.4.2 Session reached its maximum duration, closing; connect again to go on');
    await raw.closed;
    await expect.poll(() => inbound!.server.openSessions()).toBe(0);
  });

  it('lets a message being received past max_session_duration finish and answers it first', async () => {
    inbound = await startInbound({ options: { maxSessionDurationMs: 1000 } });
    const raw = await openRawAtData(inbound.port);
    raw.write('Subject: slow\r\n\r\n');
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 200));
      raw.write(`line ${i}\r\n`);
    }
    expect(await raw.command('.')).toMatch(/^250 2\.6\.0 /);
    expect(await raw.reply()).toBe('421 4.4.2 Session reached its maximum duration, closing; connect again to go on');
    await raw.closed;
    expect(inbound.store.messages).toHaveLength(1);
  });

  it('cuts off a message trickled past max_session_duration after the grace: 421 4.4.2, socket closed, nothing spooled, no temp file left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trickle-spool-'));
    const spool = await openSpool<SpooledMeta>(dir);
    try {
      const log = collectingLog([]);
      // Grace: the smaller of idle_timeout and 60 s, here 1 s.
      inbound = await startInbound({
        options: { maxSessionDurationMs: 1500, idleTimeoutMs: 1000 },
        deps: { store: createSpoolStore({ spool, hostName: 'mx.edgemail.test', log }) },
      });
      const raw = await openRawAtData(inbound.port);
      let closed = false;
      void raw.closed.then(() => (closed = true));
      raw.write('Subject: trickle\r\n\r\n');
      // The message is being written to the spool (its temp files exist) while the data arrives.
      await expect.poll(() => readdirSync(dir).length).toBeGreaterThan(0);
      // One byte every 200 ms: never idle for 1 s, so only the deadline can end it.
      const trickle = (async () => {
        for (let i = 0; i < 100 && !closed; i++) {
          raw.write('x');
          await new Promise((r) => setTimeout(r, 200));
        }
      })();
      expect(await raw.reply(10_000)).toBe('421 4.4.2 Session reached its maximum duration while the message was still arriving, closing; send it again in a new session');
      await raw.closed;
      await trickle;
      await expect.poll(() => inbound!.server.openSessions()).toBe(0);
      await expect.poll(() => readdirSync(dir)).toEqual([]);
      expect(await spool.list()).toEqual([]);
    } finally {
      await spool.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends a NOOP/RSET flood: one past max_noop_rset_per_session gets 421 4.7.0', async () => {
    inbound = await startInbound({ options: { maxNoopRsetPerSession: 3 } });
    const raw = await greeted(inbound.port);
    expect(await raw.command('NOOP')).toMatch(/^250 /);
    expect(await raw.command('RSET')).toMatch(/^250 /);
    expect(await raw.command('NOOP')).toMatch(/^250 /);
    expect(await raw.command('RSET')).toBe('421 4.7.0 Too many NOOP and RSET commands in this session (at most 3), closing');
    await raw.closed;
    await expect.poll(() => inbound!.server.openSessions()).toBe(0);
  });

  it('refuses MAIL FROM past max_messages_per_session with 421 4.7.0 and closes', async () => {
    inbound = await startInbound({ options: { maxMessagesPerSession: 2 } });
    const raw = await greeted(inbound.port);
    for (let i = 0; i < 2; i++) {
      await toDataPrompt(raw);
      expect(await raw.command(`${MESSAGE}.`)).toMatch(/^250 2\.6\.0 /);
    }
    expect(await raw.command('MAIL FROM:<a@sender.test>')).toBe('421 4.7.0 Too many messages in this session (at most 2), closing; connect again to go on');
    await raw.closed;
    expect(inbound.store.messages).toHaveLength(2);
    // A new session may send again.
    expect((await sendMessage({ port: inbound.port, from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE })).response).toMatch(/^250 /);
  });

  it('answers 452 4.3.1 when the disk is full while writing, never 250', async () => {
    // /dev/full: every write fails with ENOSPC, as on a full file system.
    inbound = await startInbound({ deps: { store: (message) => pipeline(message, createWriteStream('/dev/full')) } });
    const result = await sendMessage({ port: inbound.port, from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE });
    expect(result.error?.response).toBe('452 4.3.1 Insufficient system storage, try again later');
  });
});

describe('session caps behind the PROXY front', () => {
  let listener: RunningListener | undefined;
  afterEach(async () => {
    await listener?.close(0);
    listener = undefined;
  });

  it('count the address from the PROXY header, not the balancer\'s', async () => {
    const { server } = createTestInbound({ options: { maxSessionsPerIp: 1 } });
    listener = await listen(server, { port: 0, host: '127.0.0.1', proxy: { trusted: ['127.0.0.1'] }, log: collectingLog([]) });
    const via = async (client: string) => {
      const raw = await openRaw(listener!.port);
      raw.write(buildProxyV1({ source: client, destination: '127.0.0.1', sourcePort: 40_000, destinationPort: 25 }));
      return raw;
    };
    const first = await via('203.0.113.7');
    expect(await first.reply()).toMatch(/^220 /);
    const second = await via('203.0.113.7');
    expect(await second.reply()).toBe(TOO_MANY_FROM_ADDRESS);
    await second.closed;
    // Another client behind the same balancer has its own place.
    const other = await via('198.51.100.9');
    expect(await other.reply()).toMatch(/^220 /);
    first.close();
    other.close();
  });
});

describe('session caps with implicit TLS', () => {
  let pair: CertificatePair;
  let inbound: RunningInbound | undefined;
  beforeAll(() => {
    pair = selfSignedCertificate(['mx.edgemail.test']);
  });
  afterEach(async () => {
    await inbound?.close();
    inbound = undefined;
  });

  /** The first reply over TLS (from `localAddress`), and the socket. */
  const tlsSession = (port: number, localAddress = '127.0.0.1') => new Promise<{ reply: string; close(): void; closed: Promise<void> }>((resolve, reject) => {
    const socket = connectTls({ socket: connect({ port, host: '127.0.0.1', localAddress }), rejectUnauthorized: false });
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.once('error', reject);
    socket.once('data', (chunk) => resolve({ reply: chunk.toString('latin1').trim(), close: () => socket.destroy(), closed }));
  });

  // Closed (or reset, when the ClientHello was still unread) before the server said anything.
  const REFUSED_BEFORE_HANDSHAKE = { handshakeCompleted: false, error: expect.stringMatching(/^(read ECONNRESET|Client network socket disconnected before secure TLS connection was established)$/) };

  /** How a TLS client refused by a cap ends: whether its handshake completed, and the error it saw. */
  const tlsRefusal = (port: number, localAddress = '127.0.0.1') => new Promise<{ handshakeCompleted: boolean; error: string }>((resolve) => {
    const socket = connectTls({ socket: connect({ port, host: '127.0.0.1', localAddress }), rejectUnauthorized: false });
    let handshakeCompleted = false;
    let error = '';
    socket.on('secureConnect', () => {
      handshakeCompleted = true;
      socket.destroy(); // what a refusal after the handshake would say does not matter here
    });
    socket.on('error', (err) => (error = err.message));
    socket.on('close', () => resolve({ handshakeCompleted, error }));
  });

  it('counts a session from its first byte, and frees the place of one killed mid-handshake', async () => {
    inbound = await startInbound({ options: { tls: pair, secure: true, maxSessions: 2 } });
    for (let i = 0; i < 5; i++) {
      const raw = await openRaw(inbound.port);
      raw.write(Buffer.from([0x16, 0x03, 0x01])); // the start of a ClientHello, then gone
      raw.close();
    }
    await expect.poll(() => inbound!.server.openSessions()).toBe(0);
    const [a, b] = [await tlsSession(inbound.port), await tlsSession(inbound.port)];
    expect([a.reply, b.reply]).toEqual([expect.stringMatching(/^220 /), expect.stringMatching(/^220 /)]);
    // Past the cap the socket is closed before any handshake work.
    expect(await tlsRefusal(inbound.port)).toEqual(REFUSED_BEFORE_HANDSHAKE);
    a.close();
    b.close();
    await expect.poll(() => inbound!.server.openSessions()).toBe(0);
  });

  it('closes a TLS client past max_sessions_per_ip without a handshake; the plain port beside it still answers 421 4.7.0', async () => {
    const sessionSlots = createSessionSlots({ maxSessions: 0, maxPerAddress: 1 });
    inbound = await startInbound({ options: { tls: pair, secure: true, sessionSlots } });
    const plain = await startInbound({ options: { sessionSlots } });
    try {
      const held = await tlsSession(inbound.port);
      expect(held.reply).toMatch(/^220 /);
      expect(await tlsRefusal(inbound.port)).toEqual(REFUSED_BEFORE_HANDSHAKE);
      expect(await refusedWith(plain.port)).toBe(TOO_MANY_FROM_ADDRESS);
      // Another address completes its handshake and is greeted; the refused ones held nothing.
      const other = await tlsSession(inbound.port, '127.0.0.2');
      expect(other.reply).toMatch(/^220 /);
      expect(inbound.server.openSessions('127.0.0.1')).toBe(1);
      held.close();
      other.close();
      await expect.poll(() => inbound!.server.openSessions()).toBe(0);
    } finally {
      await plain.close();
    }
  });
});
