// The front on real sockets: a client writes bytes, the handed-over socket is
// read as the SMTP layer would read it.
import { connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, test } from 'vitest';
import { buildProxyV1, buildProxyV2 } from './build-proxy-header.js';
import { createProxyFront, type ProxyDropEvent, type ProxyFrontOptions, type ProxyPeer } from './proxy-front.js';

interface Handover { socket: Socket; peer: ProxyPeer }

/** A queue of events with a promise for the next one. */
function queue<T>() {
  const items: T[] = [];
  const waiters: ((item: T) => void)[] = [];
  return {
    items,
    push(item: T) { const waiter = waiters.shift(); if (waiter) waiter(item); else items.push(item); },
    next(): Promise<T> { const item = items.shift(); return item !== undefined ? Promise.resolve(item) : new Promise((resolve) => waiters.push(resolve)); },
  };
}

const opened: (Server | Socket)[] = [];
afterEach(async () => {
  // Sockets first: a server's close() waits for its connections.
  const things = opened.splice(0);
  for (const thing of things) if ('destroy' in thing) thing.destroy();
  for (const thing of things) if (!('destroy' in thing)) await new Promise((resolve) => thing.close(resolve));
});

async function startFront(options: Partial<ProxyFrontOptions> & { host?: string } = {}) {
  const handovers = queue<Handover>();
  const drops = queue<ProxyDropEvent>();
  const front = createProxyFront({
    trusted: ['127.0.0.1'],
    headerTimeoutMs: 2000,
    ...options,
    handOver: (socket, peer) => { opened.push(socket); handovers.push({ socket, peer }); },
    onDrop: (event) => drops.push(event),
  });
  opened.push(front);
  await new Promise<void>((resolve) => front.listen(0, options.host ?? '127.0.0.1', resolve));
  const { port } = front.address() as AddressInfo;
  return { port, handovers, drops };
}

async function dial(port: number, host = '127.0.0.1'): Promise<Socket> {
  const socket = connect({ port, host, noDelay: true });
  opened.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return socket;
}

/** Resolves when the peer has closed our connection. */
function closed(socket: Socket): Promise<void> {
  socket.on('error', () => {});
  socket.resume();
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

/** Reads exactly `length` bytes from a handed-over socket. */
function readBytes(socket: Socket, length: number): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= length) { socket.off('data', onData); resolve(Buffer.concat(chunks).toString('latin1')); }
    };
    socket.on('data', onData);
  });
}

const v4 = { source: '203.0.113.7', destination: '10.0.0.1', sourcePort: 40000, destinationPort: 25 };
const v6 = { source: '2001:db8::7', destination: '2001:db8::1', sourcePort: 40001, destinationPort: 25 };

describe('trusted peer', () => {
  test.each([
    ['v1 TCP4', buildProxyV1(v4), { remoteAddress: '203.0.113.7', remotePort: 40000 }],
    ['v1 TCP6', buildProxyV1(v6), { remoteAddress: '2001:db8::7', remotePort: 40001 }],
    ['v2 IPv4', buildProxyV2({ command: 'proxy', endpoints: v4 }), { remoteAddress: '203.0.113.7', remotePort: 40000 }],
    ['v2 IPv6', buildProxyV2({ command: 'proxy', endpoints: v6 }), { remoteAddress: '2001:db8::7', remotePort: 40001 }],
  ])('%s: the header names the client', async (_name, header, expected) => {
    const { port, handovers } = await startFront();
    const client = await dial(port);
    client.write(header);
    const { peer } = await handovers.next();
    expect(peer).toEqual(expected);
  });

  test.each([
    ['v1 UNKNOWN', buildProxyV1()],
    ['v2 LOCAL', buildProxyV2({ command: 'local' })],
  ])('%s: the socket keeps its own address', async (_name, header) => {
    const { port, handovers } = await startFront();
    const client = await dial(port);
    client.write(header);
    const { peer } = await handovers.next();
    expect(peer).toEqual({ remoteAddress: '127.0.0.1', remotePort: client.localPort });
  });

  test('bytes in the same segment as the header reach the SMTP layer', async () => {
    const { port, handovers } = await startFront();
    const client = await dial(port);
    client.write(Buffer.concat([buildProxyV2({ command: 'proxy', endpoints: v4, tlvs: Buffer.from([4, 0, 1, 0]) }), Buffer.from('EHLO x\r\n')]));
    const { socket, peer } = await handovers.next();
    expect(peer.remoteAddress).toBe('203.0.113.7');
    expect(await readBytes(socket, 8)).toBe('EHLO x\r\n');
  });

  test.each([
    ['v1', buildProxyV1(v4), v4.source],
    ['v2', buildProxyV2({ command: 'proxy', endpoints: v6 }), v6.source],
  ])('a %s header sent one byte per segment is read whole', async (_name, header, source) => {
    const { port, handovers } = await startFront();
    const client = await dial(port);
    for (const byte of header) {
      expect(handovers.items).toHaveLength(0);
      client.write(Buffer.from([byte]));
      await sleep(2);
    }
    client.write('EHLO x\r\n');
    const { socket, peer } = await handovers.next();
    expect(peer.remoteAddress).toBe(source);
    expect(await readBytes(socket, 8)).toBe('EHLO x\r\n');
  });

  test('an IPv4-mapped IPv6 peer matches its IPv4 trusted entry', async () => {
    const { port, handovers } = await startFront({ host: '::' });
    const client = await dial(port, '127.0.0.1');
    client.write(buildProxyV1(v4));
    const { socket, peer } = await handovers.next();
    expect(socket.remoteAddress).toBe('::ffff:127.0.0.1');
    expect(peer.remoteAddress).toBe('203.0.113.7');
  });

  test('an IPv6 peer in a CIDR entry must send a header', async () => {
    const { port, handovers } = await startFront({ host: '::1', trusted: ['::/127'] });
    const client = await dial(port, '::1');
    client.write(buildProxyV2({ command: 'proxy', endpoints: v4 }));
    expect((await handovers.next()).peer.remoteAddress).toBe('203.0.113.7');
  });
});

describe('trusted peer dropped', () => {
  test('no header within the timeout: dropped, never handed over', async () => {
    const { port, handovers, drops } = await startFront({ headerTimeoutMs: 150 });
    const client = await dial(port);
    const started = Date.now();
    await closed(client);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(await drops.next()).toMatchObject({ reason: 'timeout', peer: { remoteAddress: '127.0.0.1' } });
    expect(handovers.items).toHaveLength(0);
  });

  test('half a header, then silence: dropped at the timeout', async () => {
    const { port, drops } = await startFront({ headerTimeoutMs: 150 });
    const client = await dial(port);
    client.write(buildProxyV2({ command: 'proxy', endpoints: v4 }).subarray(0, 20));
    await closed(client);
    expect((await drops.next()).reason).toBe('timeout');
  });

  test.each([
    ['an SMTP command', Buffer.from('EHLO x\r\n')],
    ['binary garbage', Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00])],
    ['a v1 line over 107 bytes', Buffer.from(`PROXY UNKNOWN ${'a'.repeat(200)}`)],
    ['a v2 length over the 4 KiB cap', buildProxyV2({ command: 'proxy', endpoints: v4, tlvs: new Uint8Array(5000) })],
  ])('%s: dropped at once', async (_name, bytes) => {
    const { port, handovers, drops } = await startFront({ headerTimeoutMs: 10_000 });
    const client = await dial(port);
    client.on('error', () => {});
    client.write(bytes);
    await closed(client);
    expect((await drops.next()).reason).toBe('invalid');
    expect(handovers.items).toHaveLength(0);
  });

  test('the peer closing mid-header is logged, not handed over', async () => {
    const { port, handovers, drops } = await startFront();
    const client = await dial(port);
    client.end(buildProxyV1(v4).subarray(0, 10));
    expect((await drops.next()).reason).toBe('closed');
    expect(handovers.items).toHaveLength(0);
  });
});

describe('untrusted peer', () => {
  test('handed over at once with its own address, its PROXY line left for the SMTP layer', async () => {
    const { port, handovers } = await startFront({ trusted: ['192.0.2.1'] });
    const client = await dial(port);
    const { socket, peer } = await handovers.next();
    expect(peer).toEqual({ remoteAddress: '127.0.0.1', remotePort: client.localPort });
    const line = buildProxyV1(v4);
    client.write(line);
    expect(await readBytes(socket, line.length)).toBe(line.toString('latin1'));
  });
});
