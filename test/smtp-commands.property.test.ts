// Properties of the SMTP command edge (issue 33, "A fuzzer of our own"), over
// generated command lines spoken on real sockets to a relay node enrolled at
// the real edge: valid verbs with hostile arguments, random verbs, 8-bit
// bytes, NUL, bare CR and LF, over-long lines, pipelined batches. Whatever
// comes, every command line gets one well-formed reply in time, a 421 closes
// the session (and comes only where a bound is due: the line limit,
// max_commands_per_session, smtp-server's 10th unrecognised command), nothing
// is accepted that must be refused (an unknown verb, a recipient domain not
// served, NUL in an address, an 8-bit local part without SMTPUTF8, AUTH
// that is not base64), and the node still takes a normal message after.
// Each case costs socket round trips: FC_NUM_RUNS (pnpm fuzz) sets how many;
// `pnpm test` runs a few dozen.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { openRaw, type RawSmtp } from '../relay-node/test-support/smtp-raw.js';
import { registerProvenDomain } from './support/domain-ownership.js';
import { inboundRecords, startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

/** Each run is a session or two (~50 ms): 40 in `pnpm test`; FC_NUM_RUNS / 20 under `pnpm fuzz` (1,000 of its 20,000). */
const numRuns = process.env.FC_NUM_RUNS ? Math.max(40, Math.ceil(Number(process.env.FC_NUM_RUNS) / 20)) : 40;
/** A test's time bound, grown with the runs. */
const timeout = Math.max(120_000, numRuns * 400);
const DOMAIN = 'acme-smtp-fuzz.test';
const TO = `support@${DOMAIN}`;
/** `relay_node.inbound.max_commands_per_session` of the node under test (small, so generated batches cross it). */
const MAX_COMMANDS = 30;
/** The listener's command line limit (relay-node/src/inbound/listener/inbound-server.ts). */
const MAX_LINE = 2048;
/** A reply later than this counts as a hang. */
const REPLY_BOUND_MS = 5000;
const CAP_REPLY = `421 4.7.0 Too many commands outside a mail transaction in this session (at most ${MAX_COMMANDS}), closing`;
const TRANSACTION = new Set(['MAIL', 'RCPT', 'DATA', 'BDAT']);
/** Verbs left out of generated lines: each changes how the bytes after it are read (a message, a TLS handshake, an AUTH exchange, the end). */
const STATEFUL = new Set(['DATA', 'BDAT', 'STARTTLS', 'QUIT', 'AUTH']);
/** The verbs the listener has a handler for (smtp-server's, AUTH disabled); any other is refused, and the 10th such ends the session. */
const KNOWN = new Set(['EHLO', 'HELO', 'MAIL', 'RCPT', 'DATA', 'RSET', 'NOOP', 'VRFY', 'HELP', 'QUIT', 'STARTTLS', 'XCLIENT', 'XFORWARD', 'WIZ', 'SHELL', 'KILL']);
/** smtp-server's own bound: the 10th unrecognised command in a session. */
const MAX_UNRECOGNISED = 10;
const UNRECOGNISED_REPLY = '421 4.4.2 Error: too many unrecognized commands';

let stack: TestStack;
let key: string;
let dns: TestDnsServer;
let stateDir: string;
let node: RelayNode;
const logs: LogLine[] = [];
/** Subjects of the messages a case delivered after its generated commands; each must reach the edge. */
const delivered: string[] = [];

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_RATELIMIT_RELAY_NODE_INBOUND_PER_MINUTE: '100000' } });
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'smtp-fuzz');
  ({ token: key } = await tenant.key(['relay:write', 'domains:write', 'inbound:read']));
  await registerProvenDomain(stack, key, DOMAIN);
  dns = await startDnsServer();
  stateDir = mkdtempSync(join(tmpdir(), 'relay-smtp-fuzz-'));
  await enrollNode({ edgeUrl: stack.url, key, name: 'mx-smtp-fuzz', stateDir });
  node = await startTestNode({
    stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), outbound: false, submissionPort: 0,
    env: {
      SERVICE_SUBMISSION_RATE_PER_MINUTE: '0',
      SERVICE_RELAY_NODE_INBOUND_MAX_COMMANDS_PER_SESSION: String(MAX_COMMANDS),
      // Only the general cap is under test here; NOOP/RSET have their own in relay-session-bounds.test.ts.
      SERVICE_RELAY_NODE_INBOUND_MAX_NOOP_RSET_PER_SESSION: '0',
      SERVICE_RELAY_NODE_INBOUND_MAX_SESSIONS_PER_IP: '0',
      SERVICE_RELAY_NODE_INBOUND_MAX_MESSAGES_PER_SESSION: '0',
    },
  });
}, 120_000);

afterAll(async () => {
  await node?.stop();
  await dns?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

// ---- generators -------------------------------------------------------------

const bytes = (s: string) => Buffer.from(s, 'latin1');
const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 12 });
/** Pieces of hostile arguments, as bytes: text, 8-bit bytes, NUL, bare CR or LF, tabs, long runs, addresses. */
const piece: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 6, arbitrary: printable.map(bytes) },
  { weight: 2, arbitrary: fc.uint8Array({ min: 0x80, max: 0xff, minLength: 1, maxLength: 4 }).map((a) => Buffer.from(a)) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }).map((s) => Buffer.from(s, 'utf8')) },
  { weight: 1, arbitrary: fc.constantFrom('\u0000', '\r', '\n', '\t', ' ', '<', '>', ':', '@', '=').map(bytes) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 2600 }).map((n) => Buffer.alloc(n, 'a')) },
  { weight: 2, arbitrary: fc.tuple(printable, fc.constantFrom(DOMAIN, 'elsewhere.test', '[127.0.0.1]', ''))
    .map(([local, domain]) => bytes(`<${local}@${domain}>`)) },
);
const argument = fc.array(piece, { maxLength: 4 }).map((parts) => Buffer.concat(parts));
const verb = fc.oneof(
  fc.constantFrom('EHLO', 'HELO', 'MAIL FROM:', 'RCPT TO:', 'RSET', 'NOOP', 'VRFY', 'EXPN', 'HELP', 'ETRN', 'ehlo', 'Mail From:', 'XCLIENT', 'TURN', ''),
  fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ:-'), minLength: 1, maxLength: 8 }),
);
/** One line as the client writes it (the argument may hold bare LFs: the server then reads several commands). */
const line = fc.tuple(verb, fc.constantFrom('', ' '), argument).map(([v, sep, arg]) => Buffer.concat([bytes(v + sep), arg, bytes('\r\n')]));

/** The command lines a server reads from `stream`, as smtp-server cuts them (at CRLF or a bare LF). */
function commandsIn(stream: Buffer): Buffer[] {
  const text = stream.toString('latin1');
  const lines = text.split(/\r?\n/);
  lines.pop(); // what follows the last line ending (nothing: every generated line ends with CRLF)
  return lines.map(bytes);
}

/** The verb of a command as the listener names it (inbound-connection.ts). */
const verbOf = (command: Buffer) => command.toString().split(' ').shift()!.toUpperCase();

/** Every line of a multi-line reply shares its code; `-` marks all but the last (RFC 5321 4.2.1). No bare CR, no NUL in the server's words. */
function expectWellFormed(reply: string, command: string): void {
  const lines = reply.split('\n');
  const code = lines[0]!.slice(0, 3);
  expect(code, `reply to ${command}: ${reply}`).toMatch(/^[2-5][0-5][0-9]$/);
  lines.forEach((l, i) => {
    expect(l, `reply to ${command}: ${reply}`).toMatch(i < lines.length - 1 ? new RegExp(`^${code}-`) : new RegExp(`^${code}(?: |$)`));
    expect(l, `reply to ${command}: ${JSON.stringify(reply)}`).not.toMatch(/[\r\u0000]/);
  });
}

/** The next reply, or undefined once the server has closed the session. */
async function nextReply(raw: RawSmtp, isClosed: () => boolean): Promise<string | undefined> {
  try {
    return await raw.reply(REPLY_BOUND_MS);
  } catch (err) {
    if (isClosed()) return undefined;
    throw err;
  }
}

async function session(port = node.port): Promise<{ raw: RawSmtp; isClosed: () => boolean }> {
  const raw = await openRaw(port);
  let closed = false;
  void raw.closed.then(() => (closed = true));
  expect(await raw.reply()).toMatch(/^220 /);
  return { raw, isClosed: () => closed };
}

const message = (subject: string) =>
  `From: Ann <ann@sender.example>\r\nTo: <${TO}>\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@sender.example>\r\n\r\nAfter the fuzz.\r\n.`;

// ---- properties -------------------------------------------------------------

describe('generated command lines on the inbound listener', () => {
  test('each command line gets one well-formed reply in time; a 421 closes the session; the cap ends it at the right command; a normal message still passes', async () => {
    let run = 0;
    await fc.assert(fc.asyncProperty(
      fc.array(line.filter((l) => commandsIn(l).every((c) => !STATEFUL.has(verbOf(c)))), { minLength: 1, maxLength: 12 }),
      fc.boolean(),
      async (lines, pipelined) => {
        const { raw, isClosed } = await session();
        try {
          if (pipelined) raw.write(Buffer.concat(lines));
          let counted = 0;
          let unrecognised = 0;
          let ended = false;
          let n = 0;
          lines: for (const written of lines) {
            if (!pipelined) raw.write(written);
            for (const command of commandsIn(written)) {
              n++;
              const shown = JSON.stringify(command.toString('latin1').slice(0, 80));
              if (command.length > MAX_LINE) {
                // Over-long: the session ends with 421 and no later command is read.
                expect(await nextReply(raw, isClosed), `reply to a ${command.length}-byte line`).toBe('421 4.4.2 Error: Command line too long');
                ended = true;
                break lines;
              }
              const name = verbOf(command);
              if (!TRANSACTION.has(name) && ++counted > MAX_COMMANDS) {
                expect(await nextReply(raw, isClosed), `reply to command ${n} (${counted} outside a transaction): ${shown}`).toBe(CAP_REPLY);
                ended = true;
                break lines;
              }
              if (!KNOWN.has(name) && ++unrecognised >= MAX_UNRECOGNISED) {
                expect(await nextReply(raw, isClosed), `reply to unrecognised command ${unrecognised}: ${shown}`).toBe(UNRECOGNISED_REPLY);
                ended = true;
                break lines;
              }
              const reply = await nextReply(raw, isClosed);
              expect(reply, `no reply to command ${n}: ${shown}`).toBeDefined();
              expectWellFormed(reply!, shown);
              // No 421 is due before the caps.
              expect(reply, `reply to ${shown}`).not.toMatch(/^421/);
              // Never 2xx to what must be refused.
              if (!KNOWN.has(name)) expect(reply, `reply to unknown ${shown}`).toMatch(/^5/);
              if (name === 'RCPT' && /@elsewhere\.test>/i.test(command.toString('latin1'))) expect(reply, `reply to ${shown}`).toMatch(/^5/);
              if ((name === 'MAIL' || name === 'RCPT') && command.includes(0)) expect(reply, `reply to ${shown}`).toMatch(/^5/);
            }
          }
          if (ended) {
            await expect(raw.closed.then(() => true)).resolves.toBe(true);
            return;
          }
          // Still open, under the cap: the same session takes a normal message (RSET and EHLO count).
          if (counted + 2 > MAX_COMMANDS) return;
          const subject = `after-fuzz-${run++}-${Date.now()}`;
          expect(await raw.command('RSET')).toMatch(/^250 /);
          expect(await raw.command('EHLO client.test')).toMatch(/^250[ -]/);
          expect(await raw.command('MAIL FROM:<ann@sender.example>')).toMatch(/^250 /);
          expect(await raw.command(`RCPT TO:<${TO}>`)).toMatch(/^250 /);
          expect(await raw.command('DATA')).toMatch(/^354 /);
          expect(await raw.command(message(subject))).toMatch(/^250 2\.6\.0 /);
          delivered.push(subject);
        } finally {
          raw.close();
        }
      },
    ), { numRuns, examples: [
      [[bytes('EHLO client.test\r\n'.repeat(MAX_COMMANDS + 5))], true],
      [[bytes('MAIL FROM:<a\u0000b@sender.example>\r\n')], false],
      [[bytes(`HELO ${'h'.repeat(3000)}\r\n`)], true],
      [[bytes('EHLO x\rNOOP\nRSET\r\n')], true],
      [[bytes('XYZZY\r\n'.repeat(MAX_UNRECOGNISED + 2))], false],
    ] });
    // The messages cases sent after their commands reached the edge (the newest 100: the listing's first page holds 200).
    const newest = delivered.slice(-100);
    expect(newest.length).toBeGreaterThan(0);
    const subjects = await eventually(async () => new Set((await inboundRecords(stack, key)).map((r) => r.subject)),
      (s) => newest.every((d) => s.has(d)), 30_000);
    expect(newest.filter((d) => !subjects.has(d))).toEqual([]);
  }, timeout);
});

/** Local-part characters (RFC 5322 atext, ASCII; no dot, so the part is a valid dot-atom but for its 8-bit bytes) around which 8-bit bytes are put. */
const atext = fc.string({ unit: fc.constantFrom(...'abcxyzABC0189!#$%&\'*+-/=?^_`{|}~'), maxLength: 6 });
/** A local part with at least one byte over 0x7f: UTF-8 text, or bytes that are not UTF-8 at all. */
const eightBitLocal = fc.tuple(atext, fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }).map((s) => s.replace(/[\x00-\x7f]/g, '')).filter((s) => s.length > 0).map((s) => Buffer.from(s, 'utf8')),
  fc.uint8Array({ min: 0x80, max: 0xff, minLength: 1, maxLength: 4 }).map((a) => Buffer.from(a)),
), atext).map(([a, mid, b]) => Buffer.concat([bytes(a), mid, bytes(b)]));

describe('an 8-bit local part without SMTPUTF8 (RFC 6531 3.7.4.1)', () => {
  test('is refused 553 5.6.7 at MAIL FROM and at RCPT TO, and the session goes on', async () => {
    await fc.assert(fc.asyncProperty(eightBitLocal, async (local) => {
      const { raw } = await session();
      try {
        const ask = (...parts: (string | Buffer)[]) => {
          raw.write(Buffer.concat([...parts.map((p) => (typeof p === 'string' ? bytes(p) : p)), bytes('\r\n')]));
          return raw.reply(REPLY_BOUND_MS);
        };
        expect(await raw.command('EHLO client.test')).toMatch(/^250[ -]/);
        expect(await ask('MAIL FROM:<', local, '@sender.example>')).toMatch(/^553 5\.6\.7 /);
        expect(await ask('MAIL FROM:<ann@sender.example>')).toMatch(/^250 /);
        expect(await ask('RCPT TO:<', local, `@${DOMAIN}>`)).toMatch(/^553 5\.6\.7 /);
        expect(await ask(`RCPT TO:<${TO}>`)).toMatch(/^250 /);
      } finally {
        raw.close();
      }
    }), { numRuns: Math.ceil(numRuns / 2), examples: [[Buffer.from('jörg', 'utf8')], [Buffer.from([0x6a, 0xff, 0x67])]] });
  }, timeout);
});

/** RFC 4648 base64 as RFC 4954 asks for it: the alphabet, padded to a multiple of 4. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** AUTH responses that are not base64: near misses (bad length or padding, a stray character) and junk with 8-bit bytes. */
const notBase64 = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'ABCabc019+/='), minLength: 1, maxLength: 14 }),
  fc.tuple(fc.base64String({ maxLength: 12 }), fc.constantFrom('!', '%', '-', '_', '.', '*', '\u0000', '\u00e9', '\u00ff', '\u0080'), fc.base64String({ maxLength: 8 })).map((p) => p.join('')),
).filter((s) => s !== '=' && s !== '*' && !BASE64.test(s));

describe('AUTH on the submission listener', () => {
  test('a response that is not base64 is 501 5.5.2, as initial response or continuation, never 454 or 2xx/3xx', async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.tuple(notBase64, fc.constantFrom('initial', 'plain', 'login')), { minLength: 1, maxLength: 4 }), async (attempts) => {
      const { raw } = await session(node.submissionPort!);
      try {
        expect(await raw.command('EHLO client.test')).toMatch(/^250/);
        expect(await raw.command('STARTTLS')).toMatch(/^220 /);
        await raw.startTls();
        expect(await raw.command('EHLO client.test')).toMatch(/^250/);
        const malformed = '501 5.5.2 Malformed AUTH response: not valid base64 (RFC 4954)';
        const send = (text: string) => {
          raw.write(Buffer.concat([Buffer.from(text, 'latin1'), bytes('\r\n')]));
          return raw.reply(REPLY_BOUND_MS);
        };
        for (const [junk, how] of attempts) {
          if (how === 'initial') expect(await send(`AUTH PLAIN ${junk}`), `AUTH PLAIN ${JSON.stringify(junk)}`).toBe(malformed);
          else {
            expect(await raw.command(`AUTH ${how.toUpperCase()}`)).toMatch(/^334/);
            expect(await send(junk), `continuation ${JSON.stringify(junk)}`).toBe(malformed);
          }
        }
      } finally {
        raw.close();
      }
    }), { numRuns: Math.ceil(numRuns / 2), examples: [[[['AA=A', 'initial']]], [[['@@@@', 'plain']]]] });
  }, timeout);
});
