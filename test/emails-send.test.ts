// The send routes (issue 9 "Send", "Sandbox", "Bad input"): POST
// /api/v1/emails/send and /batch, their validation (header injection named
// by field), the from-domain rule, suppressed recipients, attachments in R2,
// the routes' own body limit, Idempotency-Key, and sandbox keys.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, test } from 'vitest';
import { purgeIdempotencyKeys } from '../edge/src/services/idempotency/purge.js';
import type { Db } from '../edge/src/db/client.js';
import { useTenantStack } from './support/tenant-stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';

// Small limits, so that the limit tests move kilobytes rather than megabytes.
const MAX_BODY = 65_536;
const MAX_ATTACHMENTS = 262_144;
const SEND_LIMIT = Math.ceil((MAX_ATTACHMENTS * 4) / 3) + MAX_BODY;

const env = useTenantStack({
  settings: { SERVICE_SERVER_MAX_BODY_BYTES: String(MAX_BODY), SERVICE_SEND_MAX_ATTACHMENT_BYTES: String(MAX_ATTACHMENTS) },
  keys: {
    sender: ['emails:write', 'emails:read'],
    domains: ['domains:write'],
    suppressor: ['suppressions:write'],
    reader: ['emails:read'],
    sandboxReader: ['sandbox:write'],
  },
});

let sandboxKey: string;
let sandboxWithoutPermission: string;

/** Registers a domain for a project and marks it verified, as a passing verification would. */
async function verifiedDomain(token: string, name: string): Promise<string> {
  const r = await env.stack.call('POST', '/api/v1/domains', { token, body: { name } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [r.body.domain.id]);
  return r.body.domain.id;
}

beforeAll(async () => {
  await verifiedDomain(env.keys.domains, 'acme.test');
  // Registered, never verified.
  expect((await env.stack.call('POST', '/api/v1/domains', { token: env.keys.domains, body: { name: 'pending.acme.test' } })).status).toBe(201);
  // Another project's verified domain.
  await verifiedDomain((await env.other.key(['domains:write'])).token, 'globex.test');
  sandboxKey = (await env.tenant.key(['sandbox:write'], { sandbox: true })).token;
  sandboxWithoutPermission = (await env.tenant.key(['emails:write'], { sandbox: true })).token;
});

const send = (body: unknown, token = env.keys.sender, headers: Record<string, string> = {}) =>
  env.stack.call('POST', '/api/v1/emails/send', { token, body, headers });
const batch = (body: unknown, token = env.keys.sender, headers: Record<string, string> = {}) =>
  env.stack.call('POST', '/api/v1/emails/batch', { token, body, headers });

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

const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64');

describe('POST /api/v1/emails/send', () => {
  test('201 {message_id, emails}: one row per recipient, to then cc then bcc, queued for the relay nodes', async () => {
    const before = await counts();
    const r = await send({
      from: 'Acme News <News@Acme.TEST>',
      to: ['Ann <Ann@Example.ORG>', 'bob@example.org'],
      cc: ['carol@example.org'],
      bcc: ['dave@example.org'],
      reply_to: 'support@acme.test',
      subject: 'Your order has shipped',
      html: '<p>On its way</p>',
      text: 'On its way',
      headers: { 'X-Order-Id': 'A-1042', 'List-Unsubscribe': '<mailto:unsub@acme.test>' },
      tags: ['shipping', 'transactional'],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.headers.get('idempotent-replayed')).toBeNull();
    const { message_id: messageId, emails } = r.body;
    expect(Object.keys(r.body).sort()).toEqual(['emails', 'message_id']);
    const common = {
      // The header form is composed from the parsed name and address (issue 13 item 3): the domain lower case.
      message_id: messageId, project_id: env.tenant.project.id, from: 'Acme News <News@acme.test>',
      to: ['Ann <Ann@example.org>', 'bob@example.org'], cc: ['carol@example.org'], subject: 'Your order has shipped',
      status: 'queued', attempts: 0, error_message: null, smtp_reply: null, node_id: null,
      tags: ['shipping', 'transactional'], headers: { 'X-Order-Id': 'A-1042', 'List-Unsubscribe': '<mailto:unsub@acme.test>' },
      sandbox: false, origin: 'api', send_at: null, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), sent_at: null,
      // Issue 29: every record names its message stream; a send naming none is transactional.
      stream: 'transactional',
    };
    expect(emails).toEqual([
      { ...common, id: expect.any(String), recipient: 'Ann@example.org', kind: 'to' },
      { ...common, id: expect.any(String), recipient: 'bob@example.org', kind: 'to' },
      { ...common, id: expect.any(String), recipient: 'carol@example.org', kind: 'cc' },
      { ...common, id: expect.any(String), recipient: 'dave@example.org', kind: 'bcc' },
    ]);
    expect(await counts()).toEqual({ ...before, messages: before.messages + 1, emails: before.emails + 4 });

    const { rows: [message] } = await env.stack.sql.query('SELECT * FROM outbound_messages WHERE id = $1', [messageId]);
    expect(message).toMatchObject({
      project_id: env.tenant.project.id, message_id: `<${messageId}@acme.test>`, from: 'Acme News <News@acme.test>',
      to: ['Ann <Ann@example.org>', 'bob@example.org'], cc: ['carol@example.org'], bcc: ['dave@example.org'],
      reply_to: ['support@acme.test'], subject: 'Your order has shipped', html: '<p>On its way</p>', text: 'On its way',
      attachments: [], tags: ['shipping', 'transactional'], sandbox: false,
    });
    const { rows } = await env.stack.sql.query(
      'SELECT id, recipient, kind, status, next_attempt_at IS NOT NULL AS due, lease_node_id FROM emails WHERE message_id = $1 ORDER BY recipient', [messageId]);
    expect(rows.map((x) => [x.recipient, x.kind, x.status, x.due, x.lease_node_id])).toEqual([
      ['Ann@example.org', 'to', 'queued', true, null], ['bob@example.org', 'to', 'queued', true, null],
      ['carol@example.org', 'cc', 'queued', true, null], ['dave@example.org', 'bcc', 'queued', true, null],
    ]);

    // The log shows each recipient as the answer did.
    const logged = await env.stack.call('GET', `/api/v1/emails/${emails[0].id}`, { token: env.keys.reader });
    expect(logged.status).toBe(200);
    expect(logged.body.email).toMatchObject(emails[0]);
  });

  test('to, cc, bcc and reply_to take a single string as a one-entry array; the log and the message show arrays', async () => {
    const r = await send({
      from: 'news@acme.test', to: 'Ann <ann@example.org>', cc: 'carol@example.org', bcc: 'dave@example.org',
      reply_to: 'support@acme.test', subject: 'Strings', text: 'Hi',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.emails.map((e: { recipient: string; kind: string }) => [e.recipient, e.kind]))
      .toEqual([['ann@example.org', 'to'], ['carol@example.org', 'cc'], ['dave@example.org', 'bcc']]);
    expect(r.body.emails[0]).toMatchObject({ to: ['Ann <ann@example.org>'], cc: ['carol@example.org'] });
    const { rows: [message] } = await env.stack.sql.query('SELECT "to", cc, bcc, reply_to FROM outbound_messages WHERE id = $1', [r.body.message_id]);
    expect(message).toEqual({ to: ['Ann <ann@example.org>'], cc: ['carol@example.org'], bcc: ['dave@example.org'], reply_to: ['support@acme.test'] });
    const logged = await env.stack.call('GET', `/api/v1/emails/${r.body.emails[0].id}`, { token: env.keys.reader });
    expect(logged.body.email).toMatchObject({ to: ['Ann <ann@example.org>'], cc: ['carol@example.org'], reply_to: ['support@acme.test'] });

    // The batch route's messages alike.
    const b = await batch({ messages: [minimal({ to: 'erin@example.org' }), minimal({ to: ['frank@example.org'], cc: 'gina@example.org' })] });
    expect(b.status, JSON.stringify(b.body)).toBe(201);
    expect(b.body.messages.map((m: { emails: { recipient: string; kind: string }[] }) => m.emails.map((e) => [e.recipient, e.kind])))
      .toEqual([[['erin@example.org', 'to']], [['frank@example.org', 'to'], ['gina@example.org', 'cc']]]);
  });

  test('an address named twice gets one row, as its first mention', async () => {
    const r = await send(minimal({ to: ['ann@example.org', 'ANN@example.org'], cc: ['bob@example.org'], bcc: ['ann@EXAMPLE.org', 'Bob@example.org'] }));
    expect(r.status).toBe(201);
    expect(r.body.emails.map((e: { recipient: string; kind: string }) => [e.recipient, e.kind])).toEqual([['ann@example.org', 'to'], ['bob@example.org', 'cc']]);
  });

  test.each([
    ['subject with CRLF', minimal({ subject: 'Hi\r\nBcc: victim@example.org' }), 'subject', 'must not contain CR or LF'],
    ['subject with a bare LF', minimal({ subject: 'Hi\nX: y' }), 'subject', 'must not contain CR or LF'],
    ['empty subject', minimal({ subject: '  ' }), 'subject', 'must not be empty'],
    ['from with CRLF', minimal({ from: 'news@acme.test\r\nBcc: victim@example.org' }), 'from', 'must not contain CR or LF'],
    ['from display name with LF', minimal({ from: 'Acme\n <news@acme.test>' }), 'from', 'must not contain CR or LF'],
    ['a to address with CR', minimal({ to: ['ann@example.org', 'bob@example.org\rBcc: x@example.org'] }), 'to.1', 'must not contain CR or LF'],
    ['an invalid to address', minimal({ to: ['ann@example.org', 'bob@example.org', 'not an address'] }), 'to.2', 'must be an email address'],
    ['an invalid cc address', minimal({ cc: ['carol@'] }), 'cc.0', 'must be an email address (local@domain)'],
    ['an invalid bcc address', minimal({ bcc: ['ok@example.org', 'a..b@example.org'] }), 'bcc.1', 'must be an email address: the local part is not a dot-atom'],
    ['reply_to with LF', minimal({ reply_to: 'x@example.org\nBcc: y@example.org' }), 'reply_to', 'must not contain CR or LF'],
    ['a reply_to list entry', minimal({ reply_to: ['x@example.org', 'nope'] }), 'reply_to.1', 'must be an email address (local@domain)'],
    ['11 reply_to addresses', minimal({ reply_to: Array.from({ length: 11 }, (_, i) => `r${i}@example.org`) }), 'reply_to', 'must have at most 10 addresses'],
    ['an empty to string', minimal({ to: '' }), 'to', 'must be an email address (local@domain)'],
    ['an empty cc string', minimal({ cc: '' }), 'cc', 'must be an email address (local@domain)'],
    ['an empty bcc string', minimal({ bcc: '' }), 'bcc', 'must be an email address (local@domain)'],
    ['an empty reply_to string', minimal({ reply_to: '' }), 'reply_to', 'must be an email address (local@domain)'],
    ['a to string holding a list', minimal({ to: 'ann@example.org, bob@example.org' }), 'to', 'must be one address: a list (`,` or `;`) is not accepted, give each address as its own entry'],
    ['a to string with CRLF', minimal({ to: 'ann@example.org\r\nBcc: x@example.org' }), 'to', 'must not contain CR or LF'],
    ['cc that is neither a string nor an array', minimal({ cc: 5 }), 'cc', 'must be an address or an array of addresses'],
    ['a to array holding a number', minimal({ to: ['ann@example.org', 5] }), 'to', 'must be an address or an array of addresses'],
    ['no to', { from: 'news@acme.test', subject: 'Hello', text: 'Hi' }, 'to', 'is required'],
    ['no recipients', minimal({ to: [] }), 'to', 'must have at least one recipient'],
    ['51 recipients in to', minimal({ to: Array.from({ length: 51 }, (_, i) => `r${i}@example.org`) }), 'to', 'must have at most 50 recipients'],
    ['51 recipients with cc and bcc', minimal({ to: Array.from({ length: 30 }, (_, i) => `t${i}@example.org`), cc: Array.from({ length: 11 }, (_, i) => `c${i}@example.org`), bcc: Array.from({ length: 10 }, (_, i) => `b${i}@example.org`) }), 'to', 'must have at most 50 recipients, cc and bcc included (has 51)'],
    ['neither html nor text', { from: 'news@acme.test', to: ['ann@example.org'], subject: 'Hi' }, 'html', 'html or text is required'],
    ['a header value with CRLF', minimal({ headers: { 'X-Order-Id': '1\r\nBcc: victim@example.org' } }), 'headers.X-Order-Id', 'must not contain CR or LF'],
    ['a header name with CRLF', minimal({ headers: { 'X-A\r\nBcc': 'v' } }), 'headers', 'header name "X-A\\r\\nBcc" must not contain CR or LF'],
    ['a header name with a space', minimal({ headers: { 'X Order': 'v' } }), 'headers', 'header name "X Order" is not an RFC 5322 field name (1 to 100 printable ASCII characters, no space or colon)'],
    ['a header name with a colon', minimal({ headers: { 'X-A:': 'v' } }), 'headers', 'header name "X-A:" is not an RFC 5322 field name (1 to 100 printable ASCII characters, no space or colon)'],
    ['Subject as a custom header', minimal({ headers: { subject: 'other' } }), 'headers.subject', 'is set by the service and cannot be a custom header'],
    ['Bcc as a custom header', minimal({ headers: { Bcc: 'x@example.org' } }), 'headers.Bcc', 'is set by the service and cannot be a custom header'],
    ['a Content- header', minimal({ headers: { 'Content-Type': 'text/html' } }), 'headers.Content-Type', 'is set by the service and cannot be a custom header'],
    ['DKIM-Signature as a custom header', minimal({ headers: { 'DKIM-Signature': 'v=1' } }), 'headers.DKIM-Signature', 'is set by the service and cannot be a custom header'],
    ['a header value that is no string', minimal({ headers: { 'X-N': 5 } }), 'headers.X-N', 'Invalid input: expected string, received number'],
    ['a filename with CRLF', minimal({ attachments: [{ filename: 'a.pdf\r\nX: y', content: 'QQ==' }] }), 'attachments.0.filename', 'must not contain CR or LF'],
    ['content that is no base64', minimal({ attachments: [{ filename: 'a.txt', content: 'QQ==' }, { filename: 'b.txt', content: 'not base64!' }] }), 'attachments.1.content', 'must be base64'],
    ['a content_type with LF', minimal({ attachments: [{ filename: 'a.txt', content: 'QQ==', content_type: 'text/plain\nX: y' }] }), 'attachments.0.content_type', 'must not contain CR or LF'],
    ['a malformed content_type', minimal({ attachments: [{ filename: 'a.txt', content: 'QQ==', content_type: 'text' }] }), 'attachments.0.content_type', 'must be a media type (type/subtype)'],
    ['11 tags', minimal({ tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }), 'tags', 'must have at most 10 tags'],
  ])('%s → 400 naming the field; nothing written', async (_name, body, field, problem) => {
    const before = await counts();
    const r = await send(body);
    expect(r.body).toEqual({ error: `invalid request body: ${field}: ${problem}`, fields: expect.objectContaining({ [field]: problem }) });
    expect(r.status).toBe(400);
    expect(await counts()).toEqual(before);
  });

  test('unknown fields and a missing from are refused', async () => {
    const before = await counts();
    const extra = await send(minimal({ priority: 'high' }));
    expect(extra.status).toBe(400);
    expect(extra.body.error).toContain('priority');
    const missing = await send({ to: ['ann@example.org'], subject: 'x', text: 'y' });
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.fields)).toEqual(['from']);
    expect(await counts()).toEqual(before);
  });

  test.each([
    ['a domain registered but not verified', 'news@pending.acme.test', 'from domain pending.acme.test is not verified: publish its DNS records and POST /api/v1/domains/'],
    ['another project\'s verified domain', 'ceo@globex.test', 'from domain globex.test is not a domain of this project'],
    ['a domain nobody registered', 'x@unknown.example', 'from domain unknown.example is not a domain of this project'],
    ['a subdomain of a verified domain', 'x@mail.acme.test', 'from domain mail.acme.test is not a domain of this project'],
  ])('from on %s → 400 naming from; nothing written', async (_name, from, problem) => {
    const before = await counts();
    const r = await send(minimal({ from }));
    expect(r.status).toBe(400);
    expect(r.body.error).toContain(`invalid request body: from: ${problem}`);
    expect(r.body.fields.from).toContain(problem);
    expect(await counts()).toEqual(before);
  });

  test('a domain that loses its verification refuses sends again, naming the problem', async () => {
    const id = await verifiedDomain(env.keys.domains, 'lapsed.acme.test');
    expect((await send(minimal({ from: 'x@lapsed.acme.test' }))).status).toBe(201);
    await env.stack.sql.query('UPDATE domains SET verified_at = NULL WHERE id = $1', [id]);
    const r = await send(minimal({ from: 'x@lapsed.acme.test' }));
    expect(r.status).toBe(400);
    expect(r.body.fields.from).toMatch(/^from domain lapsed\.acme\.test /);
  });

  test('a suppressed recipient gets a `suppressed` row and is not queued; the others are', async () => {
    expect((await env.stack.call('POST', '/api/v1/suppressions', { token: env.keys.suppressor, body: { address: 'Gone@Example.org' } })).status).toBe(201);
    const r = await send(minimal({ to: ['gone@EXAMPLE.org', 'here@example.org'] }));
    expect(r.status).toBe(201);
    expect(r.body.emails.map((e: any) => [e.recipient, e.status, e.error_message])).toEqual([
      ['gone@example.org', 'suppressed', 'recipient is suppressed (manual)'], ['here@example.org', 'queued', null],
    ]);
    const { rows } = await env.stack.sql.query('SELECT recipient, status::text, error_message, next_attempt_at FROM emails WHERE message_id = $1 ORDER BY recipient', [r.body.message_id]);
    expect(rows).toEqual([
      { recipient: 'gone@example.org', status: 'suppressed', error_message: 'recipient is suppressed (manual)', next_attempt_at: null },
      { recipient: 'here@example.org', status: 'queued', error_message: null, next_attempt_at: expect.any(Date) },
    ]);
  });
});

describe('attachments and the send routes\' body limit', () => {
  test('go to R2 and come back byte for byte; a body above server.max_body_bytes is accepted here', async () => {
    const big = randomBytes(200_000); // its base64 alone is above server.max_body_bytes
    const wrapped = b64(big).replace(/.{76}/g, '$&\r\n'); // MIME-style line breaks are allowed
    const r = await send(minimal({
      attachments: [
        { filename: 'report.pdf', content: wrapped },
        { filename: 'notes', content: b64('plain notes'), content_type: 'text/plain; charset=utf-8' },
        { filename: 'empty.bin', content: '' },
      ],
    }));
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(201);
    const { rows: [message] } = await env.stack.sql.query('SELECT attachments FROM outbound_messages WHERE id = $1', [r.body.message_id]);
    const prefix = `outbound/${env.tenant.project.id}/${r.body.message_id}/`;
    expect(message.attachments).toEqual([
      { filename: 'report.pdf', content_type: 'application/pdf', size: 200_000, r2_key: `${prefix}0` },
      { filename: 'notes', content_type: 'text/plain; charset=utf-8', size: 11, r2_key: `${prefix}1` },
      { filename: 'empty.bin', content_type: 'application/octet-stream', size: 0, r2_key: `${prefix}2` },
    ]);

    const id = r.body.emails[0].id;
    const first = await fetch(`${env.stack.url}/api/v1/emails/${id}/attachments/0`, { headers: { authorization: `Bearer ${env.keys.reader}` } });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('application/pdf');
    expect(first.headers.get('content-disposition')).toBe('attachment; filename="report.pdf"');
    expect(Buffer.from(await first.arrayBuffer()).equals(Buffer.from(big))).toBe(true);
    const second = await fetch(`${env.stack.url}/api/v1/emails/${id}/attachments/1`, { headers: { authorization: `Bearer ${env.keys.reader}` } });
    expect(await second.text()).toBe('plain notes');
    const past = await env.stack.call('GET', `/api/v1/emails/${id}/attachments/3`, { token: env.keys.reader });
    expect(past.status).toBe(404);
    expect(past.body).toEqual({ error: 'attachment 3 not found (the message has 3)' });

    const detail = await env.stack.call('GET', `/api/v1/emails/${id}`, { token: env.keys.reader });
    expect(detail.body.email.attachments).toEqual([
      { filename: 'report.pdf', content_type: 'application/pdf', size: 200_000 },
      { filename: 'notes', content_type: 'text/plain; charset=utf-8', size: 11 },
      { filename: 'empty.bin', content_type: 'application/octet-stream', size: 0 },
    ]);
  });

  test('more than send.max_attachment_bytes decoded, together → 400 naming attachments; nothing written', async () => {
    const before = await counts();
    const half = b64(new Uint8Array(MAX_ATTACHMENTS / 2));
    const r = await send(minimal({ attachments: [{ filename: 'a', content: half }, { filename: 'b', content: half }, { filename: 'c', content: 'QQ' }] }));
    const problem = `must be at most ${MAX_ATTACHMENTS} bytes together, decoded (these are ${MAX_ATTACHMENTS + 1})`;
    expect(r.body).toEqual({ error: `invalid request body: attachments: ${problem}`, fields: { attachments: problem } });
    expect(r.status).toBe(400);
    expect(await counts()).toEqual(before);
  });

  test('a body above the send limit is 413 naming it; other routes keep server.max_body_bytes', async () => {
    const before = await counts();
    const r = await send(minimal({ text: 'x'.repeat(SEND_LIMIT) }));
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ error: `request body larger than ${SEND_LIMIT} bytes` });
    const viaBatch = await batch({ messages: [minimal({ text: 'x'.repeat(SEND_LIMIT) })] });
    expect(viaBatch.status).toBe(413);
    expect(await counts()).toEqual(before);
    const other = await env.stack.call('POST', '/api/v1/suppressions', { token: env.keys.suppressor, body: { address: 'a@example.org', reason: 'x'.repeat(MAX_BODY) } });
    expect(other.status).toBe(413);
    expect(other.body).toEqual({ error: `request body larger than ${MAX_BODY} bytes` });
  });
});

describe('POST /api/v1/emails/batch', () => {
  test('201 {messages}: each message as a send answers it, in order, in one transaction', async () => {
    const before = await counts();
    const r = await batch({
      messages: [
        minimal({ to: ['a1@example.org', 'a2@example.org'], tags: ['one'] }),
        minimal({ from: 'Billing <billing@acme.test>', to: ['b1@example.org'], html: '<b>b</b>', text: undefined }),
        minimal({ to: ['c1@example.org'], bcc: ['c2@example.org'] }),
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.messages.map((m: any) => m.emails.map((e: any) => [e.recipient, e.kind, e.status]))).toEqual([
      [['a1@example.org', 'to', 'queued'], ['a2@example.org', 'to', 'queued']],
      [['b1@example.org', 'to', 'queued']],
      [['c1@example.org', 'to', 'queued'], ['c2@example.org', 'bcc', 'queued']],
    ]);
    expect(r.body.messages[1].emails[0].from).toBe('Billing <billing@acme.test>');
    expect(new Set(r.body.messages.map((m: any) => m.message_id)).size).toBe(3);
    expect(await counts()).toEqual({ ...before, messages: before.messages + 3, emails: before.emails + 5 });
  });

  test.each([
    ['an invalid address in the second message', [minimal(), minimal({ to: ['x@'] })], 'messages.1.to.0', 'must be an email address (local@domain)'],
    ['header injection in the third', [minimal(), minimal(), minimal({ subject: 'a\r\nb' })], 'messages.2.subject', 'must not contain CR or LF'],
    ['an unverified from in the second', [minimal(), minimal({ from: 'x@pending.acme.test' })], 'messages.1.from', 'from domain pending.acme.test is not verified'],
    ['oversize attachments in the first', [minimal({ attachments: [{ filename: 'a', content: b64(new Uint8Array(MAX_ATTACHMENTS + 3)) }] }), minimal()], 'messages.0.attachments', `must be at most ${MAX_ATTACHMENTS} bytes together`],
  ])('%s → 400 naming messages.<i>.<field>; no message written', async (_name, messages, field, problem) => {
    const before = await counts();
    const r = await batch({ messages });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain(`invalid request body: ${field}: ${problem}`);
    expect(r.body.fields[field]).toContain(problem);
    expect(await counts()).toEqual(before);
  });

  test('0 or 101 messages → 400 naming messages', async () => {
    const none = await batch({ messages: [] });
    expect(none.body).toEqual({ error: 'invalid request body: messages: must have at least one message', fields: { messages: 'must have at least one message' } });
    const many = await batch({ messages: Array.from({ length: 101 }, () => minimal()) });
    expect(many.body).toEqual({ error: 'invalid request body: messages: must have at most 100 messages', fields: { messages: 'must have at most 100 messages' } });
  });
});

describe('Idempotency-Key', () => {
  const key = () => `order-${crypto.randomUUID()}`;

  test('a replay with the same body answers the first answer again and writes nothing', async () => {
    const k = key();
    const body = minimal({ to: ['ann@example.org', 'bob@example.org'] });
    const first = await send(body, env.keys.sender, { 'Idempotency-Key': k });
    expect(first.status).toBe(201);
    const after = await counts();
    const again = await send(body, env.keys.sender, { 'Idempotency-Key': k });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await counts()).toEqual(after);
    const { rows } = await env.stack.sql.query('SELECT route, response_status, response_body FROM idempotency_keys WHERE key = $1', [k]);
    expect(rows).toEqual([{ route: 'emails.send', response_status: 201, response_body: JSON.stringify(first.body) }]);
  });

  test('the same key with another body → 409; with the first body still the replay', async () => {
    const k = key();
    const first = await send(minimal(), env.keys.sender, { 'Idempotency-Key': k });
    expect(first.status).toBe(201);
    const after = await counts();
    const other = await send(minimal({ subject: 'Different' }), env.keys.sender, { 'Idempotency-Key': k });
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ error: `Idempotency-Key ${k} was used with another request body` });
    // The raw body counts: the same JSON written differently is another body.
    const respaced = await env.stack.call('POST', '/api/v1/emails/send', { token: env.keys.sender, rawBody: JSON.stringify(minimal(), null, 2), headers: { 'Idempotency-Key': k } });
    expect(respaced.status).toBe(409);
    const onBatch = await batch({ messages: [minimal()] }, env.keys.sender, { 'Idempotency-Key': k });
    expect(onBatch.status).toBe(409);
    expect((await send(minimal(), env.keys.sender, { 'Idempotency-Key': k })).body).toEqual(first.body);
    expect(await counts()).toEqual(after);
  });

  test('sandbox and live sends do not share keys: after a sandbox send the same key and body send for real, and the reverse (issue 13 item 8)', async () => {
    const body = minimal({ subject: 'one key, two namespaces' });
    const statusOf = async (messageId: string) =>
      (await env.stack.sql.query('SELECT status::text, next_attempt_at IS NOT NULL AS due FROM emails WHERE message_id = $1', [messageId])).rows;

    // Sandbox first: the live send with its key and body is a new, real send, queued for the relay nodes.
    const k = key();
    const captured = await send(body, sandboxKey, { 'Idempotency-Key': k });
    expect(captured.status, JSON.stringify(captured.body)).toBe(201);
    expect(captured.body.emails.map((e: any) => [e.status, e.sandbox])).toEqual([['captured', true]]);
    let before = await counts();
    const live = await send(body, env.keys.sender, { 'Idempotency-Key': k });
    expect(live.status, JSON.stringify(live.body)).toBe(201);
    expect(live.headers.get('idempotent-replayed')).toBeNull();
    expect(live.body.message_id).not.toBe(captured.body.message_id);
    expect(live.body.emails.map((e: any) => [e.status, e.sandbox])).toEqual([['queued', false]]);
    expect(await statusOf(live.body.message_id)).toEqual([{ status: 'queued', due: true }]);
    expect(await counts()).toEqual({ messages: before.messages + 1, emails: before.emails + 1, keys: before.keys + 1 });
    // Each namespace still replays its own first answer.
    const liveAgain = await send(body, env.keys.sender, { 'Idempotency-Key': k });
    expect(liveAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(liveAgain.body).toEqual(live.body);
    const sandboxAgain = await send(body, sandboxKey, { 'Idempotency-Key': k });
    expect(sandboxAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(sandboxAgain.body).toEqual(captured.body);

    // Live first: the sandbox send with its key and body is captured, not a replay of the live answer.
    const k2 = key();
    const first = await send(body, env.keys.sender, { 'Idempotency-Key': k2 });
    expect(first.status).toBe(201);
    before = await counts();
    const sandboxed = await send(body, sandboxKey, { 'Idempotency-Key': k2 });
    expect(sandboxed.status, JSON.stringify(sandboxed.body)).toBe(201);
    expect(sandboxed.headers.get('idempotent-replayed')).toBeNull();
    expect(sandboxed.body.message_id).not.toBe(first.body.message_id);
    expect(sandboxed.body.emails.map((e: any) => [e.status, e.sandbox])).toEqual([['captured', true]]);
    expect(await statusOf(sandboxed.body.message_id)).toEqual([{ status: 'captured', due: false }]);
    expect(await counts()).toEqual({ messages: before.messages + 1, emails: before.emails + 1, keys: before.keys + 1 });
  });

  test('keys are per project: another project may use the same key', async () => {
    const k = key();
    expect((await send(minimal(), env.keys.sender, { 'Idempotency-Key': k })).status).toBe(201);
    const otherSender = (await env.other.key(['emails:write'])).token;
    const r = await send(minimal({ from: 'ceo@globex.test' }), otherSender, { 'Idempotency-Key': k });
    expect(r.status).toBe(201);
    expect(r.body.emails[0].project_id).toBe(env.other.project.id);
  });

  test('a key older than 24 hours is ignored: the send is new, and its record replaces the old one', async () => {
    const k = key();
    const first = await send(minimal(), env.keys.sender, { 'Idempotency-Key': k });
    await env.stack.sql.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = $1`, [k]);
    const later = await send(minimal({ subject: 'Another body is fine now' }), env.keys.sender, { 'Idempotency-Key': k });
    expect(later.status).toBe(201);
    expect(later.body.message_id).not.toBe(first.body.message_id);
    const { rows } = await env.stack.sql.query('SELECT response_body FROM idempotency_keys WHERE key = $1', [k]);
    expect(rows.map((x) => JSON.parse(x.response_body))).toEqual([later.body]);
  });

  test('purgeIdempotencyKeys removes records older than 24 hours only', async () => {
    const old = key();
    const fresh = key();
    await send(minimal(), env.keys.sender, { 'Idempotency-Key': old });
    await send(minimal(), env.keys.sender, { 'Idempotency-Key': fresh });
    await env.stack.sql.query(`UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 second' WHERE key = $1`, [old]);
    expect(await purgeIdempotencyKeys(env.stack.db as unknown as Db)).toBeGreaterThanOrEqual(1);
    const { rows } = await env.stack.sql.query('SELECT key FROM idempotency_keys WHERE key = ANY($1)', [[old, fresh]]);
    expect(rows).toEqual([{ key: fresh }]);
  });

  test('concurrent first uses of one key: one send is written, every answer is it', async () => {
    const k = key();
    const before = await counts();
    const body = minimal({ to: ['race@example.org'] });
    const replies = await Promise.all(Array.from({ length: 8 }, () => send(body, env.keys.sender, { 'Idempotency-Key': k })));
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(new Set(replies.map((r) => JSON.stringify(r.body))).size).toBe(1);
    expect(replies.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(7);
    expect(await counts()).toEqual({ messages: before.messages + 1, emails: before.emails + 1, keys: before.keys + 1 });
  });

  test('concurrent first uses with different bodies: one wins, the others are 409', async () => {
    const k = key();
    const before = await counts();
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => send(minimal({ subject: `body ${i}` }), env.keys.sender, { 'Idempotency-Key': k })));
    expect(replies.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    for (const r of replies.filter((x) => x.status === 409)) expect(r.body).toEqual({ error: `Idempotency-Key ${k} was used with another request body` });
    expect(await counts()).toEqual({ messages: before.messages + 1, emails: before.emails + 1, keys: before.keys + 1 });
  });

  test('works on the batch route too', async () => {
    const k = key();
    const body = { messages: [minimal(), minimal({ to: ['z@example.org'] })] };
    const first = await batch(body, env.keys.sender, { 'Idempotency-Key': k });
    expect(first.status).toBe(201);
    const after = await counts();
    const again = await batch(body, env.keys.sender, { 'Idempotency-Key': k });
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await counts()).toEqual(after);
  });

  test.each([
    ['', 'empty'],
    ['x'.repeat(256), 'too long'],
    ['key\twith tab', 'a control character'],
  ])('a key %j (%s) → 400 naming the header; nothing written', async (value, _why) => {
    const before = await counts();
    const r = await send(minimal(), env.keys.sender, { 'Idempotency-Key': value });
    expect(r.body).toEqual({
      error: 'invalid header: idempotency-key: must be 1 to 255 printable ASCII characters',
      fields: { 'idempotency-key': 'must be 1 to 255 printable ASCII characters' },
    });
    expect(r.status).toBe(400);
    expect(await counts()).toEqual(before);
  });
});

describe('sandbox keys', () => {
  test('send on sandbox:write alone; every row is captured, never due; validation applies as usual', async () => {
    const r = await send(minimal({ to: ['ann@example.org'], cc: ['gone@example.org'] }), sandboxKey);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.emails.map((e: any) => [e.recipient, e.status, e.sandbox])).toEqual([
      ['ann@example.org', 'captured', true], ['gone@example.org', 'suppressed', true],
    ]);
    const { rows } = await env.stack.sql.query('SELECT status::text, next_attempt_at FROM emails WHERE message_id = $1 ORDER BY recipient', [r.body.message_id]);
    expect(rows).toEqual([{ status: 'captured', next_attempt_at: null }, { status: 'suppressed', next_attempt_at: null }]);
    const bad = await send(minimal({ subject: 'a\nb' }), sandboxKey);
    expect(bad.status).toBe(400);
    const viaBatch = await batch({ messages: [minimal()] }, sandboxKey);
    expect(viaBatch.status).toBe(201);
    expect(viaBatch.body.messages[0].emails[0].status).toBe('captured');
  });

  test('GET /api/v1/sandbox/emails lists sandbox sends only, to sandbox:write (emails:read is refused: issue 33)', async () => {
    const captured = await send(minimal({ subject: 'captured one' }), sandboxKey);
    const real = await send(minimal({ subject: 'real one' }), env.keys.sender);
    for (const token of [sandboxKey, env.keys.sandboxReader]) {
      const r = await env.stack.call('GET', '/api/v1/sandbox/emails?limit=200', { token });
      expect(r.status).toBe(200);
      const ids = r.body.emails.map((e: any) => e.id);
      expect(ids).toContain(captured.body.emails[0].id);
      expect(ids).not.toContain(real.body.emails[0].id);
      expect(r.body.emails.every((e: any) => e.sandbox === true)).toBe(true);
    }
    const one = await env.stack.call('GET', `/api/v1/sandbox/emails/${captured.body.emails[0].id}`, { token: sandboxKey });
    expect(one.status).toBe(200);
    expect(one.body.email).toMatchObject({ ...captured.body.emails[0], text: 'Hi Ann', html: null });
    const notSandbox = await env.stack.call('GET', `/api/v1/sandbox/emails/${real.body.emails[0].id}`, { token: sandboxKey });
    expect(notSandbox.status).toBe(404);
    expect(notSandbox.body).toEqual({ error: 'email not found' });
    // Both routes declare sandbox:write and nothing else: an emails:read key reads the main log, not these.
    for (const path of ['/api/v1/sandbox/emails', `/api/v1/sandbox/emails/${captured.body.emails[0].id}`]) {
      const refused = await env.stack.call('GET', path, { token: env.keys.reader });
      expect([path, refused.status, refused.body]).toEqual([path, 403, { error: 'no access to sandbox in this project' }]);
    }
  });

  test('permissions: a sandbox key is judged on sandbox:write, a normal key on emails:write', async () => {
    const before = await counts();
    const r = await send(minimal(), sandboxWithoutPermission);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'no access to sandbox in this project' });
    const normal = await send(minimal(), env.keys.sandboxReader);
    expect(normal.status).toBe(403);
    expect(normal.body).toEqual({ error: 'no access to emails in this project' });
    const reader = await send(minimal(), env.keys.reader);
    expect(reader.body).toEqual({ error: 'permission emails:write required' });
    const list = await env.stack.call('GET', '/api/v1/sandbox/emails', { token: env.keys.suppressor });
    expect(list.body).toEqual({ error: 'no access to sandbox in this project' });
    const writerOnly = (await env.tenant.key(['emails:write'])).token;
    const partial = await env.stack.call('GET', '/api/v1/sandbox/emails', { token: writerOnly });
    expect(partial.status).toBe(403);
    expect(partial.body).toEqual({ error: 'no access to sandbox in this project' });
    expect(await counts()).toEqual(before);
  });
});

describe('audit', () => {
  test('an accepted send or batch is project activity (`email.send`, `email.send_batch`); a refused one is not recorded', async () => {
    const before = await settledAuditEvents(env.stack, env.admin);
    expect((await send(minimal())).status).toBe(201);
    expect((await send(minimal({ subject: 'a\nb' }))).status).toBe(400);
    expect((await batch({ messages: [minimal()] })).status).toBe(201);
    const added = addedEvents(before, await settledAuditEvents(env.stack, env.admin));
    expect(added.map((e) => [e.type, e.category, e.project_id, e.path, e.status])).toEqual([
      ['email.send', 'project', env.tenant.project.id, '/api/v1/emails/send', 201],
      ['email.send_batch', 'project', env.tenant.project.id, '/api/v1/emails/batch', 201],
    ]);
  });
});
