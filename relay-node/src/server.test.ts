// The node's listeners: direct or behind the PROXY front, and a shutdown that
// lets a message in progress finish before it closes the port.
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { listen, type RunningListener } from './server.js';
import { collectingLog, createTestInbound } from '../test-support/inbound-harness.js';
import { openRaw, openRawAtData, toDataPrompt } from '../test-support/smtp-raw.js';
import { sendMessage } from '../test-support/smtp-client.js';

let running: RunningListener | undefined;
afterEach(async () => {
  await running?.close(0);
  running = undefined;
});

const MESSAGE = 'From: a@sender.test\r\nSubject: s\r\n\r\nhi\r\n';
const refused = (port: number) => new Promise<boolean>((resolve) => {
  const socket = connect(port, '127.0.0.1');
  socket.once('connect', () => { socket.destroy(); resolve(false); });
  socket.once('error', () => resolve(true));
});

describe('listen', () => {
  it('behind the PROXY front, takes the client address from a trusted balancer', async () => {
    const { server, store } = createTestInbound();
    running = await listen(server, { port: 0, host: '127.0.0.1', proxy: { trusted: ['127.0.0.1'] }, log: collectingLog([]) });
    const raw = await openRaw(running.port);
    raw.write('PROXY TCP4 203.0.113.9 192.0.2.1 40000 25\r\n');
    expect(await raw.reply()).toMatch(/^220 /);
    await toDataPrompt(raw);
    expect(await raw.command(`${MESSAGE}.`)).toMatch(/^250 /);
    raw.close();
    expect(store.messages[0]!.envelope).toMatchObject({ clientAddress: '203.0.113.9', clientPort: 40000 });
  });

  it('on close, refuses new connections at once but lets a message in progress finish', async () => {
    const { server, store } = createTestInbound();
    const listener = await listen(server, { port: 0, host: '127.0.0.1', log: collectingLog([]) });
    const raw = await openRawAtData(listener.port);
    const closing = listener.close(5000);
    await new Promise((r) => setTimeout(r, 100));
    expect(await refused(listener.port)).toBe(true);
    expect(await raw.command(`${MESSAGE}.`)).toMatch(/^250 /);
    expect(await raw.command('QUIT')).toMatch(/^221 /);
    await closing;
    expect(store.messages).toHaveLength(1);
  });

  it('ends sessions still open after the drain with 421, storing nothing half-received', async () => {
    const { server, store } = createTestInbound();
    const listener = await listen(server, { port: 0, host: '127.0.0.1', log: collectingLog([]) });
    const raw = await openRawAtData(listener.port);
    raw.write('Subject: cut\r\n\r\npartial');
    const started = Date.now();
    await listener.close(200);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await raw.reply()).toMatch(/^421 4\.3\.2 /);
    await raw.closed;
    expect(store.messages).toHaveLength(0);
    const later = await sendMessage({ port: listener.port, from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE });
    expect(later.error?.code).toMatch(/ECONNREFUSED|ESOCKET|ECONNECTION/);
  });
});
