// The whole ingest chain on real sockets: smtp-server's DATA stream through
// the line-ending and size guards into the spool, answering 250 only once the
// spool has the message, and 554/552 after the dot otherwise. Raw bytes from
// a raw socket, so the smuggling sequences arrive exactly as an attacker
// would send them.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { BareLineEndingError, createLineEndingNormalizer, createSizeLimit, MessageTooLargeError, type BareLineEndingMode } from '../inbound/hygiene/index.js';
import { smtpReplies } from '../../test-support/smtp-replies.js';
import { openSpool, type Spool } from './open-spool.js';

interface Meta { mailFrom: string; rcptTo: string[]; clientIp: string }

const MAX_BYTES = 4096;
let spool: Spool<Meta>;
let dir = '';
let mode: BareLineEndingMode = 'normalize';

const server = new SMTPServer({
  authOptional: true,
  disableReverseLookup: true,
  hideSTARTTLS: true,
  logger: false,
  onData(stream, session, callback) {
    let id = '';
    const meta: Meta = {
      mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
      rcptTo: session.envelope.rcptTo.map((r) => r.address),
      clientIp: session.remoteAddress,
    };
    pipeline(stream, createLineEndingNormalizer(mode), createSizeLimit(MAX_BYTES), async (body: AsyncIterable<Buffer>) => {
      ({ id } = await spool.write(body, meta));
    }).then(
      () => callback(null, `Queued as ${id}`),
      (err: unknown) => {
        // The typed refusals are replies as they stand.
        if (err instanceof BareLineEndingError || err instanceof MessageTooLargeError) return callback(err);
        callback(Object.assign(new Error('4.3.0 Could not store the message'), { responseCode: 451 }));
      },
    );
  },
});
let port = 0;
const sockets: Socket[] = [];

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'spool-smtp-'));
  spool = await openSpool<Meta>(dir);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Opens a session up to the DATA prompt. */
async function startData() {
  const socket = connect({ port, host: '127.0.0.1' });
  sockets.push(socket);
  const reply = smtpReplies(socket);
  expect(await reply()).toMatch(/^220 /);
  for (const command of ['EHLO client.test', 'MAIL FROM:<a@example.test>', 'RCPT TO:<b@example.test>', 'DATA']) {
    socket.write(`${command}\r\n`);
    expect(await reply()).toMatch(/^(250|354)[ -]/);
  }
  return { socket, reply };
}

const smuggled = [
  ['<LF>.<CRLF>', 'hi\n.\r\n'],
  ['<CR>.<CR><LF>', 'hi\r.\r\r\n'],
] as const;

describe.each(smuggled)('%s', (_name, trick) => {
  const data = `Subject: x\r\n\r\n${trick}MAIL FROM:<evil@example.test>\r\nRCPT TO:<victim@example.test>\r\nDATA\r\nsmuggled\r\n.\r\n`;

  test('normalize: one message, the smuggled commands inside it as text, in CRLF lines', async () => {
    mode = 'normalize';
    const { socket, reply } = await startData();
    socket.write(data);
    expect(await reply()).toMatch(/^250 Queued as /);
    socket.write('QUIT\r\n');
    expect(await reply()).toMatch(/^221 /); // no replies to smuggled commands in between
    const [id, ...others] = await spool.list();
    expect(others).toEqual([]);
    const entry = await spool.read(id!);
    expect(entry.meta).toEqual({ mailFrom: 'a@example.test', rcptTo: ['b@example.test'], clientIp: '127.0.0.1' });
    const chunks: Buffer[] = [];
    for await (const chunk of entry.openBody()) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('latin1');
    expect(body).toContain('hi\r\n.\r\n');
    expect(body).toContain('MAIL FROM:<evil@example.test>\r\nRCPT TO:<victim@example.test>\r\nDATA\r\n');
    expect(body.endsWith('smuggled\r\n')).toBe(true);
    expect(body).not.toMatch(/\r(?!\n)|(?<!\r)\n/);
  });

  test('reject: 554 5.5.0 after the dot, nothing spooled, the session goes on', async () => {
    mode = 'reject';
    const { socket, reply } = await startData();
    socket.write(data);
    expect(await reply()).toMatch(/^554 5\.5\.0 Bare <(CR|LF)>/);
    expect(await spool.list()).toEqual([]);
    socket.write('RSET\r\n');
    expect(await reply()).toMatch(/^250 /);
  });
});

test('over the size limit: 552 5.3.4 after the dot, nothing spooled, the next message goes through', async () => {
  mode = 'normalize';
  const { socket, reply } = await startData();
  socket.write(`Subject: big\r\n\r\n${'x'.repeat(998)}\r\n`.repeat(50) + '.\r\n');
  expect(await reply()).toMatch(/^552 5\.3\.4 /);
  expect(await spool.list()).toEqual([]);
  for (const command of ['MAIL FROM:<a@example.test>', 'RCPT TO:<b@example.test>', 'DATA']) {
    socket.write(`${command}\r\n`);
    expect(await reply()).toMatch(/^(250|354) /);
  }
  socket.write('Subject: small\r\n\r\nfits\r\n.\r\n');
  expect(await reply()).toMatch(/^250 /);
  expect(await spool.depth()).toBe(1);
});
