// Ingest of forwarded mail at the edge (issue 7, docs/relay-protocol.md
// "POST /relay/v1/inbound"): one record per project owning a recipient
// domain, bytes in R2, the record and its outbox row in one transaction, and
// a spool id stored once however often it is forwarded.
import { beforeAll, describe, expect, test } from 'vitest';
import { enroll, forward, inboundBody, inboundMeta, makeInstallationWide, registerDomain, type EnrolledNode } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';
import { awayFromWindowEdge, eventually } from './support/wait.js';

const MAX_MESSAGE = 100_000;
const BODY_LIMIT = 2 * MAX_MESSAGE + 1_048_576;
const INBOUND_LIMIT = 30;
// The tenant is the project acme, receiving for acme.test; the other is globex, for globex.test.
const env = useTenantStack({
  settings: { SERVICE_INBOUND_MAX_MESSAGE_SIZE: String(MAX_MESSAGE), SERVICE_RATELIMIT_RELAY_NODE_INBOUND_PER_MINUTE: String(INBOUND_LIMIT) },
  captureLogs: true,
  keys: { reader: ['inbound:read'] },
});
let otherReader: string;
let node: EnrolledNode;

beforeAll(async () => {
  otherReader = (await env.other.key(['inbound:read'])).token;
  await registerDomain(env.stack, env.tenant.project.id, 'acme.test');
  await registerDomain(env.stack, env.other.project.id, 'globex.test');
  node = await enroll(env.stack, (await env.tenant.key(['relay:write'])).token);
  // Its messages go to two projects' domains: an operator's node.
  await makeInstallationWide(env.stack, node.id);
  // Which transaction inserted each row. (xmin would not do: the dispatcher's
  // hand-over updates the outbox row moments later, giving it a new xmin.)
  await env.stack.sql.query(`
    CREATE TABLE inserted_by (tbl text, row_id text, tx xid8);
    CREATE FUNCTION note_inserting_tx() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO inserted_by VALUES (TG_TABLE_NAME, NEW.id::text, pg_current_xact_id()); RETURN NEW; END $$;
    CREATE TRIGGER note_tx AFTER INSERT ON inbound_emails FOR EACH ROW EXECUTE FUNCTION note_inserting_tx();
    CREATE TRIGGER note_tx AFTER INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION note_inserting_tx();`);
});

const RAW = [
  'From: Ann <ann@example.org>', 'To: support@acme.test, sales@globex.test', 'Subject: Hello',
  'Message-ID: <abc@example.org>', 'MIME-Version: 1.0', 'Content-Type: text/plain', '', 'Hi there', '',
].join('\r\n');
const PDF = Uint8Array.from({ length: 3000 }, (_, i) => (i * 31) % 256); // not UTF-8: bytes must survive as bytes

async function records(spoolId: string) {
  const { rows } = await env.stack.sql.query(`
    SELECT e.*, i.tx::text AS tx FROM inbound_emails e JOIN inserted_by i ON i.tbl = 'inbound_emails' AND i.row_id = e.id::text
    WHERE spool_id = $1 ORDER BY project_id`, [spoolId]);
  return rows;
}
async function events(recordIds: string[]) {
  const { rows } = await env.stack.sql.query(`
    SELECT o.*, i.tx::text AS tx FROM outbox o JOIN inserted_by i ON i.tbl = 'outbox' AND i.row_id = o.id::text
    WHERE event = 'inbound.received' AND data->>'id' = ANY($1)`, [recordIds]);
  return rows;
}
const download = async (path: string, token: string) => {
  const res = await fetch(`${env.stack.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) };
};

describe('a message for two projects', () => {
  const meta = inboundMeta(['support@acme.test', 'Sales@GLOBEX.test', 'billing@acme.test', 'someone@unregistered.test'], {
    parsed: {
      ok: true, error: null, message_id: '<abc@example.org>', subject: 'Hello', text: 'Hi there', html: '<p>Hi there</p>',
      headers: { from: 'Ann <ann@example.org>', subject: 'Hello' },
      attachments: [{ filename: 'a.pdf', content_type: 'application/pdf', size: 1 }],
    },
  });
  let first: Awaited<ReturnType<typeof forward>>;

  beforeAll(async () => {
    first = await forward(env.stack, node.token, { meta, raw: RAW, attachments: [{ bytes: PDF, type: 'application/pdf' }] });
  });

  test('is answered with one record per project, each holding that project\'s recipients', async () => {
    expect(first.status).toBe(200);
    expect(first.body.duplicate).toBe(false);
    expect(first.body.inbound_emails).toHaveLength(2);
    const rows = await records(meta.spool_id);
    expect(rows).toHaveLength(2);
    const byProject = Object.fromEntries(rows.map((r) => [r.project_id, r]));
    expect(byProject[env.tenant.project.id].recipients).toEqual(['support@acme.test', 'billing@acme.test']);
    expect(byProject[env.other.project.id].recipients).toEqual(['Sales@GLOBEX.test']);
    for (const answer of first.body.inbound_emails) {
      expect(answer).toEqual({ id: byProject[answer.project_id].id, project_id: answer.project_id, status: 'received' });
    }
    expect(byProject[env.tenant.project.id]).toMatchObject({
      node_id: node.id, sender: 'ann@example.org', subject: 'Hello', message_id: '<abc@example.org>', text_body: 'Hi there',
      html_body: '<p>Hi there</p>', headers: { from: 'Ann <ann@example.org>', subject: 'Hello' }, status: 'received', status_reason: null,
      auth: meta.auth, size: RAW.length, attachments: [{ filename: 'a.pdf', content_type: 'application/pdf', size: PDF.length }],
      raw_key: `inbound/${env.tenant.project.id}/${meta.spool_id}/raw.eml`,
    });
    expect(byProject[env.tenant.project.id].received_at.toISOString()).toBe(meta.received_at);
    const { rows: [domain] } = await env.stack.sql.query('SELECT id FROM domains WHERE name = $1', ['acme.test']);
    expect(byProject[env.tenant.project.id].domain_id).toBe(domain.id);
  });

  test('its records and their inbound.received outbox rows were written in one transaction, metadata only', async () => {
    const rows = await records(meta.spool_id);
    const outbox = await events(rows.map((r) => r.id));
    expect(outbox).toHaveLength(2);
    // The same transaction id on every row: one db.batch().
    expect(new Set([...rows, ...outbox].map((r) => r.tx)).size).toBe(1);
    // Then handed to the webhook dispatcher, after the answer.
    await eventually(() => events(rows.map((r) => r.id)), (e) => e.every((row) => row.handed_over_at !== null));
    for (const event of outbox) {
      const record = rows.find((r) => r.id === event.data.id)!;
      expect(event.project_id).toBe(record.project_id);
      expect(event.data).toMatchObject({
        id: record.id, project_id: record.project_id, sender: 'ann@example.org', recipients: record.recipients,
        subject: 'Hello', message_id: '<abc@example.org>', status: 'received', received_at: meta.received_at,
        auth: meta.auth, attachments: record.attachments, size: RAW.length,
      });
      for (const body of ['text_body', 'html_body', 'headers']) expect(event.data).not.toHaveProperty(body);
    }
  });

  test('the raw message and the attachment are in R2, byte for byte, for each project', async () => {
    const rows = await records(meta.spool_id);
    for (const row of rows) {
      const reader = row.project_id === env.tenant.project.id ? env.keys.reader : otherReader;
      const raw = await download(`/api/v1/inbound-emails/${row.id}/raw`, reader);
      expect(raw.status).toBe(200);
      expect(raw.type).toBe('message/rfc822');
      expect(new TextDecoder().decode(raw.bytes)).toBe(RAW);
      const attachment = await download(`/api/v1/inbound-emails/${row.id}/attachments/0`, reader);
      expect(attachment.status).toBe(200);
      expect(attachment.type).toMatch(/^application\/pdf/);
      expect(attachment.bytes).toEqual(PDF);
    }
  });

  test('forwarded again (same spool id), nothing new is stored and the answer says duplicate', async () => {
    const rowsBefore = await records(meta.spool_id);
    const again = await forward(env.stack, node.token, { meta, raw: RAW, attachments: [{ bytes: PDF, type: 'application/pdf' }] });
    expect(again.status).toBe(200);
    expect(again.body.duplicate).toBe(true);
    expect([...again.body.inbound_emails].sort((a, b) => a.project_id.localeCompare(b.project_id)))
      .toEqual([...first.body.inbound_emails].sort((a, b) => a.project_id.localeCompare(b.project_id)));
    expect(await records(meta.spool_id)).toEqual(rowsBefore);
    expect(await events(rowsBefore.map((r) => r.id))).toHaveLength(2);
  });

  test('a node a project key enrolled stores only for its own project, whatever verdicts it claims', async () => {
    const scoped = await enroll(env.stack, (await env.tenant.key(['relay:write'])).token);
    const forged = inboundMeta(['ceo@GLOBEX.test', 'support@acme.test'], {
      auth: { spf: 'pass', dkim: 'pass', dmarc: 'pass', aligned: true, client_ip: '192.0.2.1' },
    });
    const r = await forward(env.stack, scoped.token, { meta: forged, raw: RAW });
    expect(r.status).toBe(200);
    expect(r.body.inbound_emails.map((e: { project_id: string }) => e.project_id)).toEqual([env.tenant.project.id]);
    const stored = await records(forged.spool_id);
    expect(stored.map((row) => [row.project_id, row.recipients])).toEqual([[env.tenant.project.id, ['support@acme.test']]]);
    // Only for the other project: nothing at all.
    const other = inboundMeta(['ceo@globex.test']);
    const refused = await forward(env.stack, scoped.token, { meta: other, raw: RAW });
    expect(refused.status).toBe(200);
    expect(refused.body.inbound_emails).toEqual([]);
    expect(await records(other.spool_id)).toEqual([]);
  });
});

describe('status at ingest', () => {
  const rowFor = async (spoolId: string) => (await records(spoolId))[0];

  test('a suppressed sender is stored as rejected (raw kept), only in the project that suppresses it', async () => {
    await env.stack.sql.query('INSERT INTO suppressions (project_id, address) VALUES ($1, $2)', [env.tenant.project.id, 'spam@evil.test']);
    const meta = inboundMeta(['support@acme.test', 'sales@globex.test'], { mail_from: 'SPAM@evil.test' });
    const r = await forward(env.stack, node.token, { meta, raw: RAW });
    expect(r.status).toBe(200);
    const rows = await records(meta.spool_id);
    const status = Object.fromEntries(rows.map((row) => [row.project_id, [row.status, row.status_reason]]));
    expect(status).toEqual({ [env.tenant.project.id]: ['rejected', 'sender suppressed'], [env.other.project.id]: ['received', null] });
    expect(rows.every((row) => row.raw_key !== null)).toBe(true);
    expect((await events(rows.map((row) => row.id))).map((e) => e.data.status).sort()).toEqual(['received', 'rejected']);
  });

  test('a message the node refused for DMARC p=reject is kept as rejected', async () => {
    const meta = inboundMeta(['support@acme.test'], { smtp_rejected: true, dmarc_policy: 'reject', auth: { spf: 'fail', dkim: 'none', dmarc: 'fail', aligned: false, client_ip: '203.0.113.9' } });
    expect((await forward(env.stack, node.token, { meta, raw: RAW })).body.inbound_emails[0].status).toBe('rejected');
    expect(await rowFor(meta.spool_id)).toMatchObject({ status: 'rejected', status_reason: 'dmarc policy reject', auth: meta.auth });
  });

  test('a message that could not be parsed is failed, with its raw bytes kept and downloadable', async () => {
    const garbage = 'Content-Type: multipart/mixed; boundary="x"\r\n\r\n--x\r\n\u00ff\u00fe broken';
    const meta = inboundMeta(['support@acme.test'], { parsed: { ok: false, error: 'unexpected end of multipart body' } });
    const r = await forward(env.stack, node.token, { meta, raw: garbage });
    expect(r.status).toBe(200);
    expect(r.body.inbound_emails[0].status).toBe('failed');
    const row = await rowFor(meta.spool_id);
    expect(row).toMatchObject({ status: 'failed', status_reason: 'unexpected end of multipart body', subject: '', text_body: '', attachments: [], headers: {} });
    const raw = await download(`/api/v1/inbound-emails/${row.id}/raw`, env.keys.reader);
    expect(raw.status).toBe(200);
    expect(new TextDecoder().decode(raw.bytes)).toBe(garbage);
  });

  test('a NUL in a parsed field is dropped, not a database error', async () => {
    const meta = inboundMeta(['support@acme.test'], {
      parsed: { ok: true, subject: 'a\u0000b', text: 'x\u0000', headers: { 'x-odd': '\u0000' }, attachments: [] },
    });
    expect((await forward(env.stack, node.token, { meta, raw: RAW })).status).toBe(200);
    expect(await rowFor(meta.spool_id)).toMatchObject({ subject: 'ab', text_body: 'x', headers: { 'x-odd': '' } });
  });
});

describe('refusals', () => {
  const stored = async (spoolId: string) => (await records(spoolId)).length;

  test.each([
    ['rcpt_to missing', (m: Record<string, unknown>) => { delete m.rcpt_to; }, 'meta.rcpt_to'],
    ['a recipient that is no address', (m: Record<string, any>) => { m.rcpt_to = ['support@acme.test', 'nobody']; }, 'meta.rcpt_to.1'],
    ['a spool id that is no file name', (m: Record<string, unknown>) => { m.spool_id = '../etc/passwd'; }, 'meta.spool_id'],
    ['received_at that is no timestamp', (m: Record<string, unknown>) => { m.received_at = 'yesterday'; }, 'meta.received_at'],
    ['auth.aligned that is no boolean', (m: Record<string, any>) => { m.auth.aligned = 'yes'; }, 'meta.auth.aligned'],
    ['parsed missing', (m: Record<string, unknown>) => { delete m.parsed; }, 'meta.parsed'],
  ])('malformed meta (%s) is 400 naming the field, and nothing is stored', async (_, spoil, field) => {
    const meta = inboundMeta(['support@acme.test']);
    const spoolId = meta.spool_id;
    spoil(meta);
    const r = await forward(env.stack, node.token, { meta, raw: RAW });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.fields)).toContain(field);
    expect(r.body.error).toMatch(/^invalid meta: meta\./);
    expect(await stored(spoolId)).toBe(0);
  });

  test('a body that is not what its headers and meta announce is 400 naming what is wrong, and nothing is stored', async () => {
    const meta = inboundMeta(['support@acme.test'], {
      parsed: { ok: true, attachments: [{ filename: 'a.pdf', content_type: 'application/pdf', size: 3 }] },
    });
    const good = inboundBody({ meta, raw: RAW, attachments: [{ bytes: 'PDF', type: 'application/pdf' }] });
    const metaLength = Number(good.headers['edgemail-meta-length']);
    const cases: [string, { body: Uint8Array<ArrayBuffer>; headers: Record<string, string> }, string][] = [
      ['no meta length', { body: good.body, headers: { 'content-type': good.headers['content-type']! } }, 'edgemail-meta-length'],
      ['a meta length that is no number', { body: good.body, headers: { ...good.headers, 'edgemail-meta-length': 'ten' } }, 'edgemail-meta-length'],
      ['meta that is not JSON', inboundBody({ meta, raw: RAW }), 'meta'],
      // The attachment the meta lists is not in the body.
      ['a missing attachment', { body: good.body.subarray(0, good.body.length - 3), headers: good.headers }, 'content-length'],
      // The meta says 3 bytes; 4 follow.
      ['an attachment longer than announced', { body: new Uint8Array(Buffer.concat([good.body, Buffer.from('!')])), headers: good.headers }, 'content-length'],
    ];
    cases[2]![1].body.set(new TextEncoder().encode('{nope'), 0);
    for (const [what, body, field] of cases) {
      const r = await forward(env.stack, node.token, body);
      expect(r.status, what).toBe(400);
      expect(Object.keys(r.body.fields), what).toEqual([field]);
    }
    expect(metaLength).toBeGreaterThan(0);
    expect(await stored(meta.spool_id)).toBe(0);
    // The same body as it should be is stored.
    expect((await forward(env.stack, node.token, good)).status).toBe(200);
    expect(await stored(meta.spool_id)).toBe(1);
  });

  test('a body of another type (multipart/form-data from an older node, JSON) is 415, which the node retries; nothing is stored', async () => {
    const meta = inboundMeta(['support@acme.test']);
    const form = new FormData();
    form.set('meta', JSON.stringify(meta));
    form.set('raw', new Blob([RAW], { type: 'message/rfc822' }), 'raw.eml');
    const multipart = await fetch(`${env.stack.url}/relay/v1/inbound`, { method: 'POST', headers: { authorization: `Bearer ${node.token}` }, body: form });
    expect(multipart.status).toBe(415);
    expect((await multipart.json()).error).toMatch(/^unsupported content-type multipart\/form-data: the body must be application\/vnd\.edgemail\.inbound/);
    const json = await env.stack.call('POST', '/relay/v1/inbound', { token: node.token, body: meta });
    expect(json.status).toBe(415);
    expect(Object.keys(json.body.fields)).toEqual(['content-type']);
    expect(await stored(meta.spool_id)).toBe(0);
  });

  test('a body without Content-Length is 411 before anything is read; meta over inbound.max_message_size + 1 MiB is 413', async () => {
    const meta = inboundMeta(['support@acme.test']);
    const { body, headers } = inboundBody({ meta, raw: RAW });
    // A stream of unknown length goes out chunked.
    const chunked = await fetch(`${env.stack.url}/relay/v1/inbound`, {
      method: 'POST', headers: { authorization: `Bearer ${node.token}`, ...headers }, duplex: 'half',
      body: new ReadableStream({ start(c) { c.enqueue(body); c.close(); } }),
    } as RequestInit);
    expect(chunked.status).toBe(411);
    expect((await chunked.json()).error).toMatch(/^content-length required/);
    const metaLimit = MAX_MESSAGE + 1_048_576;
    const tooMuchMeta = await forward(env.stack, node.token, { body, headers: { ...headers, 'edgemail-meta-length': String(metaLimit + 1) } });
    expect(tooMuchMeta.status).toBe(413);
    expect(tooMuchMeta.body.error).toBe(`meta larger than ${metaLimit} bytes (edgemail-meta-length: ${metaLimit + 1}): forward the raw message alone`);
    expect(await stored(meta.spool_id)).toBe(0);
  });

  test('a body over 2 × inbound.max_message_size + 1 MiB is 413, and nothing is stored', async () => {
    const meta = inboundMeta(['support@acme.test']);
    const r = await forward(env.stack, node.token, { meta, raw: 'x'.repeat(BODY_LIMIT) });
    expect(r.status).toBe(413);
    expect(r.body.error).toBe(`request body larger than ${BODY_LIMIT} bytes`);
    expect(await stored(meta.spool_id)).toBe(0);
    // Just under the limit is taken.
    const fits = inboundMeta(['support@acme.test']);
    expect((await forward(env.stack, node.token, { meta: fits, raw: 'x'.repeat(2 * MAX_MESSAGE) })).status).toBe(200);
  });

  test('recipients in no registered domain: 200 with nothing stored, and logged', async () => {
    const meta = inboundMeta(['someone@unregistered.test']);
    const r = await forward(env.stack, node.token, { meta, raw: RAW });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ inbound_emails: [], duplicate: false });
    await eventually(async () => env.stack.logs(), (logs) => logs.some((l) => l.message.includes(`inbound ${meta.spool_id} `) && l.message.includes('nothing stored')));
  });

  test('an unknown or revoked node credential is 401', async () => {
    const meta = inboundMeta(['support@acme.test']);
    expect((await forward(env.stack, `myr_abcdefgh_${'A'.repeat(43)}`, { meta, raw: RAW })).status).toBe(401);
    const gone = await enroll(env.stack, (await env.tenant.key(['relay:write'])).token);
    await env.stack.sql.query('UPDATE relay_nodes SET revoked = true WHERE id = $1', [gone.id]);
    const r = await forward(env.stack, gone.token, { meta, raw: RAW });
    expect(r).toMatchObject({ status: 401, body: { error: 'relay node revoked' } });
    expect(await stored(meta.spool_id)).toBe(0);
  });

  test(`forwarding past ratelimit.relay_node_inbound_per_minute is 429 with Retry-After, per node`, async () => {
    const busy = await enroll(env.stack, (await env.tenant.key(['relay:write'])).token);
    await awayFromWindowEdge();
    const replies = await Promise.all(Array.from({ length: INBOUND_LIMIT }, () =>
      forward(env.stack, busy.token, { meta: inboundMeta(['someone@unregistered.test']), raw: RAW })));
    expect(replies.map((r) => r.status)).toEqual(Array(INBOUND_LIMIT).fill(200));
    const meta = inboundMeta(['support@acme.test']);
    const refused = await forward(env.stack, busy.token, { meta, raw: RAW });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await stored(meta.spool_id)).toBe(0);
    // The node that forwarded everything else here has a window of its own.
    expect((await forward(env.stack, node.token, { meta, raw: RAW })).status).toBe(200);
  });
});
