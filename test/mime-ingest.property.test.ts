// Properties of the MIME edge end to end (issue 33, "A fuzzer of our own"):
// generated hostile messages (relay-node/test-support/mime-messages.ts) sent
// over real SMTP to a relay node enrolled at the real edge (workerd,
// PostgreSQL, R2). Each is answered 250 and stored as an inbound record whose
// raw download ends with exactly the bytes sent and whose parsed fields hold
// no NUL and no unpaired surrogate, or refused with a 5xx that says why;
// never a 4xx, a hang, or a record the API cannot show. The pure parsing
// properties, with hundreds of cases, are beside the parser
// (relay-node/src/inbound/forwarder/parse-message.property.test.ts); a case
// here costs a message through the whole stack, so only a few run
// (FC_NUM_RUNS / 100 under `pnpm fuzz`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { generatedMessage, header, latin1 } from '../relay-node/test-support/mime-messages.js';
import { openRaw } from '../relay-node/test-support/smtp-raw.js';
import { registerProvenDomain } from './support/domain-ownership.js';
import { inboundRecords, rawMessage, startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const numRuns = process.env.FC_NUM_RUNS ? Math.max(10, Math.ceil(Number(process.env.FC_NUM_RUNS) / 100)) : 10;
const DOMAIN = 'acme-mime-fuzz.test';
const TO = `support@${DOMAIN}`;

let stack: TestStack;
let key: string;
let dns: TestDnsServer;
let stateDir: string;
let node: RelayNode;
const logs: LogLine[] = [];

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_RATELIMIT_RELAY_NODE_INBOUND_PER_MINUTE: '100000' } });
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'mime-fuzz');
  ({ token: key } = await tenant.key(['relay:write', 'domains:write', 'inbound:read']));
  await registerProvenDomain(stack, key, DOMAIN);
  dns = await startDnsServer();
  stateDir = mkdtempSync(join(tmpdir(), 'relay-mime-fuzz-'));
  await enrollNode({ edgeUrl: stack.url, key, name: 'mx-mime-fuzz', stateDir });
  node = await startTestNode({ stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), outbound: false });
}, 120_000);

afterAll(async () => {
  await node?.stop();
  await dns?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** What PostgreSQL text and jsonb can hold: no NUL, and the string survives UTF-8 unchanged (no unpaired surrogate). */
const storable = (s: string) => !s.includes('\u0000') && Buffer.from(s, 'utf8').toString('utf8') === s;

function* strings(value: unknown, path = ''): Generator<[string, string]> {
  if (typeof value === 'string') yield [path, value];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* strings(v, `${path}.${i}`);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      yield [`${path}.<key>`, k];
      yield* strings(v, `${path}.${k}`);
    }
  }
}

/** Every line ending CRLF (the node would rewrite a bare one, and the raw bytes would not be the sent ones), ending with one. */
const crlfOnly = (message: Buffer) => {
  const text = message.toString('latin1').replace(/\r\n|\r|\n/g, '\r\n');
  return latin1(text.endsWith('\r\n') ? text : `${text}\r\n`);
};

/** Sends `message` in one session as `from`; the reply to the final dot. */
async function send(from: string, message: Buffer): Promise<string> {
  const raw = await openRaw(node.port);
  try {
    expect(await raw.reply()).toMatch(/^220 /);
    expect(await raw.command('EHLO client.test')).toMatch(/^250[ -]/);
    expect(await raw.command(`MAIL FROM:<${from}> BODY=8BITMIME`)).toMatch(/^250 /);
    expect(await raw.command(`RCPT TO:<${TO}>`)).toMatch(/^250 /);
    expect(await raw.command('DATA')).toMatch(/^354 /);
    // Dot-stuffed (RFC 5321 4.5.2), as any client sends it.
    raw.write(latin1(message.toString('latin1').replace(/^\./gm, '..')));
    raw.write('.\r\n');
    return await raw.reply(30_000);
  } finally {
    raw.close();
  }
}

let run = 0;

describe('generated messages through a real node and edge', () => {
  test('250 and a record with the bytes sent and storable fields, or a 5xx that says why; never 4xx', async () => {
    await fc.assert(fc.asyncProperty(generatedMessage, fc.array(header, { maxLength: 3 }), async (generated, more) => {
      const from = `case-${run++}-${Date.now()}@sender.example`;
      const sent = crlfOnly(Buffer.concat([...more, generated]));
      const reply = await send(from, sent);
      expect(reply, 'the reply to the final dot').toMatch(/^(250|5\d\d) /);
      if (reply.startsWith('5')) {
        expect(reply, 'a refusal names its reason').toMatch(/^5\d\d \d\.\d\.\d+ .{10,}/);
        return;
      }
      const list = await eventually(() => inboundRecords(stack, key), (l) => l.some((r) => r.sender === from), 20_000);
      const listed = list.find((r) => r.sender === from);
      expect(listed, `a record for ${from}`).toBeDefined();
      const shown = await stack.call('GET', `/api/v1/inbound-emails/${listed.id}`, { token: key });
      expect(shown.status, JSON.stringify(shown.body)).toBe(200);
      for (const [path, s] of strings(shown.body)) expect(storable(s), `${path}: ${JSON.stringify(s.slice(0, 200))}`).toBe(true);
      const record = shown.body.inbound_email;
      expect(['received', 'failed']).toContain(record.status);
      // `failed` is the message's own defect, never the edge refusing what the node read from it (the record would lose its subject and bodies).
      if (record.status === 'failed') expect(record.status_reason).not.toMatch(/edge refused/);
      const raw = await rawMessage(stack, key, listed.id);
      expect(raw.status).toBe(200);
      const tail = raw.bytes.subarray(raw.bytes.length - sent.length);
      expect(tail.equals(sent), `raw bytes differ from the sent ones at offset ${tail.findIndex((b, i) => b !== sent[i])}`).toBe(true);
    }), {
      numRuns,
      examples: [
        // Encoded words that decode to a lone surrogate, in the subject and another header.
        [latin1('Subject: =?UTF-16BE?B?2AA=?=\r\nX-A: =?UTF-16LE?B?ANg=?=\r\n\r\nhi\r\n'), []],
        [latin1("MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain; charset=utf-16le\r\nContent-Disposition: attachment; filename*=utf-16''%00%D8\r\n\r\n\u0000\u00d8\r\n--b--\r\n"), []],
        [latin1('Subject: a\u0000b\r\n\r\nbody\u0000\r\n'), []],
      ],
    });
  }, Math.max(240_000, numRuns * 3000));
});
