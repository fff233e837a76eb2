// "One From, built by us" (issue 13 item 3) through the real edge: `from`,
// `reply_to` and every `to`/`cc`/`bcc` entry must be exactly one mailbox
// (the two-mailbox From of the review, `;` lists and groups are 400 naming the
// field, nothing written); trace and authentication headers are reserved; an
// accepted send stores and shows the header form composed from the parsed
// name and address. Then the job a relay node claims is composed and signed
// by the node's own code: one From on the wire, and a From added in transit
// fails DKIM verification (mailauth, the key from a DNS server).
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createDnsResolver } from '../relay-node/src/inbound/mail-auth/dns-resolver.js';
import { composeSignedMessage } from '../relay-node/src/outbound/compose.js';
import type { OutboundJob } from '@edgemail/shared';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import type * as MailauthModule from '../relay-node/node_modules/mailauth/index.js';
import type * as MailparserModule from '../relay-node/node_modules/@types/mailparser/index.js';
import { enroll, type EnrolledNode } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';

// mailauth and mailparser are the relay node's dependencies, not the test package's.
const fromRelayNode = createRequire(new URL('../relay-node/package.json', import.meta.url));
const { authenticate } = fromRelayNode('mailauth') as typeof MailauthModule;
const { simpleParser } = fromRelayNode('mailparser') as typeof MailparserModule;

const env = useTenantStack({
  keys: {
    sender: ['emails:write', 'emails:read'],
    admin: ['domains:write', 'relay:write'],
  },
});

let node: EnrolledNode;
let dns: TestDnsServer;

beforeAll(async () => {
  const created = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.admin, body: { name: 'acme.test' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [created.body.domain.id]);
  const dkim = created.body.domain.dns_records.find((r: { purpose: string }) => r.purpose === 'dkim');
  dns = await startDnsServer({ [dkim.name]: { TXT: [dkim.value] } });
  node = await enroll(env.stack, env.keys.admin, 'mx-one-from');
});
afterAll(async () => { await dns?.close(); });

const send = (body: unknown) => env.stack.call('POST', '/api/v1/emails/send', { token: env.keys.sender, body });
const batch = (body: unknown) => env.stack.call('POST', '/api/v1/emails/batch', { token: env.keys.sender, body });
const minimal = (extra: Record<string, unknown> = {}) => ({
  from: 'news@acme.test', to: ['ann@example.org'], subject: 'Hello', text: 'Hi Ann', ...extra,
});

/** Everything a refused send must leave as it was. */
async function counts() {
  const { rows: [row] } = await env.stack.sql.query(`SELECT
    (SELECT count(*) FROM outbound_messages)::int AS messages, (SELECT count(*) FROM emails)::int AS emails,
    (SELECT count(*) FROM idempotency_keys)::int AS keys`);
  return row as { messages: number; emails: number; keys: number };
}

/** A refusal: 400 naming `field` with `problem`, and nothing written. */
async function expectRefused(reply: Promise<{ status: number; body: any }>, field: string, problem: string) {
  const before = await counts();
  const r = await reply;
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body).toEqual({ error: `invalid request body: ${field}: ${problem}`, fields: { [field]: problem } });
  expect(await counts()).toEqual(before);
}

const LIST = 'must be one address: a list (`,` or `;`) is not accepted, give each address as its own entry';
const GROUP = 'must be one address: a group (`name: …;`) is not accepted';
const SPECIAL = 'must be an email address: put a display name holding any of ( ) < > [ ] @ \\ " in double quotes';
const TRACE = 'is a trace or authentication header, written only by the servers a message passes, and cannot be a custom header';

describe('every address is exactly one mailbox', () => {
  test.each([
    ['the review\'s two-mailbox From', { from: 'ceo@bank.example, Foo <news@acme.test>' }, 'from', LIST],
    ['a From list with ;', { from: 'ceo@bank.example; news@acme.test' }, 'from', LIST],
    ['two bare From addresses', { from: 'news@acme.test, ceo@bank.example' }, 'from', LIST],
    ['a From group', { from: 'Board: ceo@bank.example, news@acme.test;' }, 'from', GROUP],
    ['a From with two <addresses>', { from: 'Foo <news@acme.test> <ceo@bank.example>' }, 'from', 'must be one address: it names more than one <address>'],
    ['an address as an unquoted display name', { from: 'ceo@bank.example <news@acme.test>' }, 'from', SPECIAL],
    ['a comment in From', { from: 'news@acme.test (CEO)' }, 'from', 'must be an email address'],
    ['a to entry that is a list', { to: ['ann@example.org', 'bob@example.org', 'carol@example.org; dave@example.org'] }, 'to.2', LIST],
    ['a to entry that is a group', { to: ['undisclosed-recipients:;'] }, 'to.0', GROUP],
    ['a cc entry with a comma', { cc: ['carol@example.org, dave@example.org'] }, 'cc.0', LIST],
    ['a bcc entry with ;', { bcc: ['ok@example.org', 'x@example.org;y@example.org'] }, 'bcc.1', LIST],
    ['reply_to as one string holding a list', { reply_to: 'support@acme.test, thief@evil.test' }, 'reply_to', LIST],
    ['a reply_to entry holding a list', { reply_to: ['support@acme.test', 'a@acme.test; thief@evil.test'] }, 'reply_to.1', LIST],
  ])('%s → 400 naming the field, nothing written', async (_name, extra, field, problem) => {
    await expectRefused(send(minimal(extra)), field, problem);
  });

  test('in a batch the message is named too, and the whole batch is refused', async () => {
    await expectRefused(batch({ messages: [minimal(), minimal({ from: 'ceo@bank.example, Foo <news@acme.test>' })] }), 'messages.1.from', LIST);
    await expectRefused(batch({ messages: [minimal({ to: ['a@example.org', 'b@example.org, c@example.org'] })] }), 'messages.0.to.1', LIST);
  });

  test('the header form is composed from the parsed name and address, in the answer, the log and the job', async () => {
    const r = await send(minimal({
      from: '"Acme, Inc."   <News@ACME.test>',
      to: ['J. Smith <j@example.org>', '"ceo@bank.example" <ann@example.org>'],
      reply_to: ['Support  Team <support@acme.test>'],
    }));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.emails[0]).toMatchObject({ from: '"Acme, Inc." <News@acme.test>', to: ['"J. Smith" <j@example.org>', '"ceo@bank.example" <ann@example.org>'] });
    const { rows: [message] } = await env.stack.sql.query('SELECT "from", "to", reply_to FROM outbound_messages WHERE id = $1', [r.body.message_id]);
    expect(message).toEqual({
      from: '"Acme, Inc." <News@acme.test>', to: ['"J. Smith" <j@example.org>', '"ceo@bank.example" <ann@example.org>'], reply_to: ['Support Team <support@acme.test>'],
    });
    const logged = await env.stack.call('GET', `/api/v1/emails/${r.body.emails[0].id}`, { token: env.keys.sender });
    expect(logged.body.email).toMatchObject({ from: '"Acme, Inc." <News@acme.test>', reply_to: ['Support Team <support@acme.test>'] });
    // Leave nothing due for the claim test below.
    await env.stack.sql.query(`UPDATE emails SET next_attempt_at = now() + interval '100 years' WHERE message_id = $1`, [r.body.message_id]);
  });
});

describe('reserved headers', () => {
  test.each([
    ['Sender', 'is reserved: a message has one author, `from`, and cannot name another sender'],
    ['sender', 'is reserved: a message has one author, `from`, and cannot name another sender'],
    ['Resent-From', TRACE],
    ['RESENT-DATE', TRACE],
    ['Resent-Message-ID', TRACE],
    ['Authentication-Results', TRACE],
    ['authentication-results', TRACE],
    ['Received-SPF', TRACE],
    ['received-spf', TRACE],
    ['ARC-Seal', TRACE],
    ['arc-authentication-results', TRACE],
    ['ARC-Message-Signature', TRACE],
    ['Return-Path', TRACE],
    ['Received', TRACE],
    ['From', 'is set by the service and cannot be a custom header'],
  ])('%s → 400 naming it, nothing written', async (name, problem) => {
    await expectRefused(send(minimal({ headers: { 'X-Fine': 'yes', [name]: 'mx.acme.test; dkim=pass header.d=bank.example' } })), `headers.${name}`, problem);
  });

  test('in a batch too; a header that only looks alike (X-Sender, X-ARC-Note) is a custom header like any other', async () => {
    await expectRefused(batch({ messages: [minimal(), minimal({ headers: { 'Resent-To': 'x@example.org' } })] }), 'messages.1.headers.Resent-To', TRACE);
    const r = await send(minimal({ headers: { 'X-Sender': 'app-7', 'X-ARC-Note': 'n' } }));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.emails[0].headers).toEqual({ 'X-Sender': 'app-7', 'X-ARC-Note': 'n' });
    await env.stack.sql.query(`UPDATE emails SET next_attempt_at = now() + interval '100 years' WHERE message_id = $1`, [r.body.message_id]);
  });
});

describe('what the relay node sends', () => {
  /** mailauth's DKIM verdicts on `bytes`, the key read from the test DNS server. */
  async function dkimResults(bytes: Buffer | string): Promise<string[]> {
    const verdict = await authenticate(Buffer.from(bytes), {
      ip: '127.0.0.1', helo: 'relay.acme.test', sender: 'news@acme.test', mta: 'mx.test',
      resolver: createDnsResolver([dns.address], { cache: false }), disableArc: true, disableBimi: true,
    });
    return (verdict.dkim.results ?? []).map((r) => `${r.signingDomain}:${r.status.result}`);
  }

  test('one From on the wire, signed d=acme.test; a From added in transit fails verification', async () => {
    const r = await send(minimal({ from: '"ceo@bank.example, Foo" <news@acme.test>', subject: 'One From' }));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const claimed = await env.stack.call('POST', '/relay/v1/outbound/claim', { token: node.token, body: { max: 10 } });
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    const job = (claimed.body.jobs as OutboundJob[]).find((j) => j.email_id === r.body.emails[0].id);
    expect(job?.message.from).toBe('"ceo@bank.example, Foo" <news@acme.test>');

    const bytes = await composeSignedMessage(job!, { signTime: new Date() });
    const parsed = await simpleParser(bytes);
    expect(parsed.from?.value).toEqual([{ name: 'ceo@bank.example, Foo', address: 'news@acme.test' }]);
    expect(bytes.toString('latin1').match(/^From:/gim)).toHaveLength(1);
    expect(await dkimResults(bytes)).toEqual(['acme.test:pass']);

    // A hop adds a second From right below the signature: the oversigned h= no longer matches.
    const text = bytes.toString('latin1');
    const end = text.search(/\r\n(?![ \t])/) + 2;
    const forged = `${text.slice(0, end)}From: ceo@bank.example\r\n${text.slice(end)}`;
    expect(await dkimResults(forged)).toEqual(['acme.test:fail']);
  });
});
