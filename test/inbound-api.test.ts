// The inbound email API (spec "Inbound email (permission resource inbound)",
// issue 7 "Edge side" and "Bad input"): keyset list, stats, get, delete,
// retry, raw and attachment downloads. Rows are seeded directly in SQL.
import { beforeAll, describe, expect, test } from 'vitest';
import { seedProject, sessionCookie } from './support/stack.js';
import { useTenantStack } from './support/tenant-stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';
import { eventually } from './support/wait.js';
import { forward as relayForward } from './support/relay.js';
import { proveOwnership } from './support/domain-ownership.js';

const env = useTenantStack({ keys: { reader: ['inbound:read'], writer: ['inbound:write'], deleter: ['inbound:delete'] } });

const AUTH = { spf: 'pass', dkim: 'pass', dmarc: 'pass', aligned: true, client_ip: '203.0.113.9' };

interface Seed {
  status?: 'received' | 'rejected' | 'failed';
  receivedAt?: string;
  rawKey?: string | null;
  attachments?: { filename: string; content_type: string; size: number }[];
  subject?: string;
}

/** Inserts `count` inbound rows for a project in one statement; returns their ids. */
async function seedInbound(projectId: string, count: number, seed: Seed = {}): Promise<string[]> {
  const { rows } = await env.stack.sql.query(
    `INSERT INTO inbound_emails (project_id, spool_id, message_id, sender, recipients, subject, text_body, html_body,
                                 headers, attachments, auth, raw_key, size, status, status_reason, received_at)
     SELECT $1, gen_random_uuid()::text, '<m' || n || '@example.org>', 'ann@example.org', ARRAY['support@acme.example'],
            $2 || ' ' || n, 'text ' || n, '<p>html ' || n || '</p>', '{"from":"Ann <ann@example.org>","subject":"hi"}'::jsonb,
            $3::jsonb, $4::jsonb, $5, 1234, $6::inbound_status, $7, $8::timestamptz
     FROM generate_series(1, $9::int) AS n
     RETURNING id`,
    [
      projectId, seed.subject ?? 'hello', JSON.stringify(seed.attachments ?? []), JSON.stringify(AUTH), seed.rawKey ?? null,
      seed.status ?? 'received', seed.status === 'rejected' ? 'sender suppressed' : seed.status === 'failed' ? 'unparseable MIME' : null,
      seed.receivedAt ?? new Date().toISOString(), count,
    ],
  );
  return rows.map((r) => r.id as string);
}

/** The project's ids as the list must give them: newest first by (received_at, id). */
async function expectedOrder(projectId: string, status?: string): Promise<string[]> {
  const { rows } = await env.stack.sql.query(
    `SELECT id FROM inbound_emails WHERE project_id = $1 AND ($2::inbound_status IS NULL OR status = $2) ORDER BY received_at DESC, id DESC`,
    [projectId, status ?? null],
  );
  return rows.map((r) => r.id as string);
}

/** Walks every page with `next`; returns the pages' ids. */
async function walk(token: string, query: string): Promise<string[][]> {
  const pages: string[][] = [];
  let next: { before: string; before_id: string } | null = null;
  do {
    const cursor: string = next ? `&before=${encodeURIComponent(next.before)}&before_id=${next.before_id}` : '';
    const r = await env.stack.call('GET', `/api/v1/inbound-emails?${query}${cursor}`, { token });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['inbound_emails', 'next']);
    const page = r.body.inbound_emails as { id: string; received_at: string }[];
    pages.push(page.map((e) => e.id));
    next = r.body.next;
    if (next) expect(next).toEqual({ before: page.at(-1)!.received_at, before_id: page.at(-1)!.id });
    expect(pages.length).toBeLessThan(100);
  } while (next);
  return pages;
}

const inboundCount = async () => Number((await env.stack.sql.query('SELECT count(*) FROM inbound_emails')).rows[0].count);
const outboxCount = async () => Number((await env.stack.sql.query('SELECT count(*) FROM outbox')).rows[0].count);

describe('GET /api/v1/inbound-emails: keyset paging', () => {
  test('120 rows sharing one received_at, among others: every row exactly once, in order, across pages of 50', async () => {
    const project = await seedProject(env.stack, env.admin, 'paging');
    const key = (await project.key(['inbound:read'])).token;
    const same = '2026-11-26T02:00:00.000Z';
    await seedInbound(project.project.id, 120, { receivedAt: same });
    await seedInbound(project.project.id, 10, { receivedAt: '2026-11-26T02:00:01.000Z' });
    await seedInbound(project.project.id, 10, { receivedAt: '2026-11-26T01:59:59.000Z' });
    await seedInbound(env.other.project.id, 30, { receivedAt: same }); // interleaved ids of another project

    const pages = await walk(key, 'limit=50');
    expect(pages.map((p) => p.length)).toEqual([50, 50, 40]);
    const seen = pages.flat();
    expect(new Set(seen).size).toBe(140);
    expect(seen).toEqual(await expectedOrder(project.project.id));
  });

  test('the default page is 50 and the largest 200; next is null on the last page', async () => {
    const project = await seedProject(env.stack, env.admin, 'limits');
    const key = (await project.key(['inbound:read'])).token;
    await seedInbound(project.project.id, 210, { receivedAt: '2026-01-01T00:00:00Z' });
    const first = await env.stack.call('GET', '/api/v1/inbound-emails', { token: key });
    expect(first.body.inbound_emails).toHaveLength(50);
    expect(first.body.next).not.toBeNull();
    expect((await walk(key, 'limit=200')).map((p) => p.length)).toEqual([200, 10]);
    const exact = await env.stack.call('GET', '/api/v1/inbound-emails?limit=200', { token: key });
    const last = exact.body.inbound_emails.at(-1);
    const tail = await env.stack.call('GET', `/api/v1/inbound-emails?limit=10&before=${encodeURIComponent(last.received_at)}&before_id=${last.id}`, { token: key });
    expect(tail.body.inbound_emails).toHaveLength(10);
    expect(tail.body.next).toBeNull(); // exactly the rest: no empty page after it
  });

  test('rows apart by microseconds keep their order; received_at carries the microseconds back', async () => {
    const project = await seedProject(env.stack, env.admin, 'micros');
    const key = (await project.key(['inbound:read'])).token;
    for (const at of ['2026-11-26T02:00:00.000001Z', '2026-11-26T02:00:00.000002Z', '2026-11-26T02:00:00.000900Z']) {
      await seedInbound(project.project.id, 2, { receivedAt: at });
    }
    await seedInbound(project.project.id, 2, { receivedAt: '2026-11-26T02:00:00Z' });
    const pages = await walk(key, 'limit=1');
    expect(pages.flat()).toEqual(await expectedOrder(project.project.id));
    const all = await env.stack.call('GET', '/api/v1/inbound-emails', { token: key });
    expect(all.body.inbound_emails.map((e: { received_at: string }) => e.received_at)).toEqual([
      '2026-11-26T02:00:00.000900Z', '2026-11-26T02:00:00.000900Z',
      '2026-11-26T02:00:00.000002Z', '2026-11-26T02:00:00.000002Z',
      '2026-11-26T02:00:00.000001Z', '2026-11-26T02:00:00.000001Z',
      '2026-11-26T02:00:00.000Z', '2026-11-26T02:00:00.000Z',
    ]);
  });

  test('before takes any RFC 3339 offset; the comparison is on the instant', async () => {
    const project = await seedProject(env.stack, env.admin, 'offsets');
    const key = (await project.key(['inbound:read'])).token;
    const [older] = await seedInbound(project.project.id, 1, { receivedAt: '2026-11-26T01:00:00Z' });
    await seedInbound(project.project.id, 1, { receivedAt: '2026-11-26T03:00:00Z' });
    const r = await env.stack.call('GET', `/api/v1/inbound-emails?before=${encodeURIComponent('2026-11-26T04:00:00+02:00')}&before_id=${crypto.randomUUID()}`, { token: key });
    expect(r.status).toBe(200);
    expect(r.body.inbound_emails.map((e: { id: string }) => e.id)).toEqual([older]);
  });

  test('status filters, also across pages', async () => {
    const project = await seedProject(env.stack, env.admin, 'status');
    const key = (await project.key(['inbound:read'])).token;
    const at = '2026-11-26T02:00:00Z';
    await seedInbound(project.project.id, 7, { receivedAt: at, status: 'received' });
    await seedInbound(project.project.id, 5, { receivedAt: at, status: 'rejected' });
    await seedInbound(project.project.id, 3, { receivedAt: at, status: 'failed' });
    for (const status of ['received', 'rejected', 'failed']) {
      const pages = await walk(key, `status=${status}&limit=2`);
      expect(pages.flat()).toEqual(await expectedOrder(project.project.id, status));
    }
    const r = await env.stack.call('GET', '/api/v1/inbound-emails?status=rejected', { token: key });
    expect(r.body.inbound_emails.every((e: { status: string; status_reason: string }) => e.status === 'rejected' && e.status_reason === 'sender suppressed')).toBe(true);
  });

  test('never another project\'s rows; an empty project has an empty page', async () => {
    const empty = await seedProject(env.stack, env.admin, 'empty');
    const r = await env.stack.call('GET', '/api/v1/inbound-emails', { token: (await empty.key(['inbound:read'])).token });
    expect(r).toMatchObject({ status: 200, body: { inbound_emails: [], next: null } });
    const mine = await env.stack.call('GET', '/api/v1/inbound-emails?limit=200', { token: env.keys.reader });
    expect(mine.body.inbound_emails.every((e: { project_id: string }) => e.project_id === env.tenant.project.id)).toBe(true);
  });

  test.each([
    ['limit=0', 'limit', 'must be an integer from 1 to 200'],
    ['limit=201', 'limit', 'must be an integer from 1 to 200'],
    ['limit=-1', 'limit', 'must be an integer from 1 to 200'],
    ['limit=1.5', 'limit', 'must be an integer from 1 to 200'],
    ['limit=lots', 'limit', 'must be an integer from 1 to 200'],
    ['status=bounced', 'status', 'must be received, rejected or failed'],
    ['before=yesterday&before_id=0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11', 'before', 'must be an RFC 3339 timestamp'],
    ['before=2026-11-26T02:00:00&before_id=0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11', 'before', 'must be an RFC 3339 timestamp'],
    ['before=2026-11-26T02:00:00Z&before_id=42', 'before_id', 'must be a UUID'],
    ['before=2026-11-26T02:00:00Z', 'before_id', 'required with before'],
    ['before_id=0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11', 'before', 'required with before_id'],
    ['offset=50', 'offset', 'not supported: page with before and before_id'],
  ])('?%s is 400 naming the parameter', async (query, field, problem) => {
    const r = await env.stack.call('GET', `/api/v1/inbound-emails?${query}`, { token: env.keys.reader });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid query: ${field}: ${problem}`, fields: { [field]: problem } });
  });
});

describe('GET /api/v1/inbound-emails/stats', () => {
  test('counts per status, zeros included, this project only', async () => {
    const project = await seedProject(env.stack, env.admin, 'stats');
    const key = (await project.key(['inbound:read'])).token;
    const zero = await env.stack.call('GET', '/api/v1/inbound-emails/stats', { token: key });
    expect(zero).toMatchObject({ status: 200, body: { counts: { received: 0, rejected: 0, failed: 0 } } });
    expect(zero.body).toEqual({ counts: { received: 0, rejected: 0, failed: 0 } });
    await seedInbound(project.project.id, 4, { status: 'received' });
    await seedInbound(project.project.id, 2, { status: 'failed' });
    await seedInbound(env.other.project.id, 3, { status: 'rejected' });
    const r = await env.stack.call('GET', '/api/v1/inbound-emails/stats', { token: key });
    expect(r.body).toEqual({ counts: { received: 4, rejected: 0, failed: 2 } });
  });
});

describe('GET /api/v1/inbound-emails/{id}', () => {
  test('{inbound_email} with every field of the spec\'s record', async () => {
    const attachments = [{ filename: 'a.pdf', content_type: 'application/pdf', size: 1234 }];
    const [id] = await seedInbound(env.tenant.project.id, 1, { receivedAt: '2026-11-26T02:00:00Z', rawKey: 'inbound/x/raw.eml', attachments });
    const { rows: [domain] } = await env.stack.sql.query(`INSERT INTO domains (project_id, name) VALUES ($1, $2) RETURNING id`, [env.tenant.project.id, `get-${crypto.randomUUID().slice(0, 8)}.example`]);
    await env.stack.sql.query('UPDATE inbound_emails SET domain_id = $1 WHERE id = $2', [domain.id, id]);
    const r = await env.stack.call('GET', `/api/v1/inbound-emails/${id}`, { token: env.keys.reader });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['inbound_email']);
    expect(r.body.inbound_email).toEqual({
      id, project_id: env.tenant.project.id, domain_id: domain.id, message_id: '<m1@example.org>', sender: 'ann@example.org',
      recipients: ['support@acme.example'], subject: 'hello 1', text_body: 'text 1', html_body: '<p>html 1</p>',
      // A row written without ingest (as rows stored before reply stripping) has the columns' defaults.
      stripped_text: '', stripped_signature: null,
      // Not scored: no relay node asked rspamd for it (docs/inbound.md, Spam scoring).
      spam: null,
      headers: { from: 'Ann <ann@example.org>', subject: 'hi' }, attachments, auth: AUTH, has_raw: true, size: 1234,
      status: 'received', status_reason: null, received_at: '2026-11-26T02:00:00.000Z', created_at: expect.any(String),
    });
    const [noRaw] = await seedInbound(env.tenant.project.id, 1, { status: 'failed' });
    const failed = await env.stack.call('GET', `/api/v1/inbound-emails/${noRaw}`, { token: env.keys.reader });
    expect(failed.body.inbound_email).toMatchObject({ has_raw: false, status: 'failed', status_reason: 'unparseable MIME' });
  });

  test('another project\'s id and an unknown id are 404 without its data; a non-UUID is 400 naming id', async () => {
    const [foreign] = await seedInbound(env.other.project.id, 1, { subject: 'secret' });
    for (const id of [foreign, crypto.randomUUID()]) {
      const r = await env.stack.call('GET', `/api/v1/inbound-emails/${id}`, { token: env.keys.reader });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'inbound email not found' });
    }
    for (const bad of ['nope', '12345', `${crypto.randomUUID()}x`]) {
      const r = await env.stack.call('GET', `/api/v1/inbound-emails/${bad}`, { token: env.keys.reader });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'invalid param: id: must be a UUID', fields: { id: 'must be a UUID' } });
    }
  });
});

describe('DELETE /api/v1/inbound-emails/{id}', () => {
  test('204; the row is gone; again 404; a record without stored objects deletes too', async () => {
    const [id, keep] = await seedInbound(env.tenant.project.id, 2, { rawKey: `inbound/${env.tenant.project.id}/missing/raw.eml` });
    const r = await env.stack.call('DELETE', `/api/v1/inbound-emails/${id}`, { token: env.keys.deleter });
    expect(r.status).toBe(204);
    expect(r.body).toBeNull();
    expect((await env.stack.sql.query('SELECT id FROM inbound_emails WHERE id = ANY($1)', [[id, keep]])).rows).toEqual([{ id: keep }]);
    const again = await env.stack.call('DELETE', `/api/v1/inbound-emails/${id}`, { token: env.keys.deleter });
    expect(again).toMatchObject({ status: 404, body: { error: 'inbound email not found' } });
  });

  test('another project\'s id is 404 and stays; a non-UUID is 400', async () => {
    const [foreign] = await seedInbound(env.other.project.id, 1);
    const r = await env.stack.call('DELETE', `/api/v1/inbound-emails/${foreign}`, { token: env.keys.deleter });
    expect(r).toMatchObject({ status: 404, body: { error: 'inbound email not found' } });
    expect((await env.stack.sql.query('SELECT 1 FROM inbound_emails WHERE id = $1', [foreign])).rowCount).toBe(1);
    const bad = await env.stack.call('DELETE', '/api/v1/inbound-emails/x', { token: env.keys.deleter });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid param: id: must be a UUID', fields: { id: 'must be a UUID' } } });
  });
});

describe('POST /api/v1/inbound-emails/{id}/retry', () => {
  test('{emitted: true} for any status: one outbox row inbound.received with the metadata only; the record is unchanged', async () => {
    for (const status of ['received', 'rejected', 'failed'] as const) {
      const [id] = await seedInbound(env.tenant.project.id, 1, { status, attachments: [{ filename: 'a.txt', content_type: 'text/plain', size: 3 }] });
      const before = (await env.stack.sql.query('SELECT * FROM inbound_emails WHERE id = $1', [id])).rows;
      const record = (await env.stack.call('GET', `/api/v1/inbound-emails/${id}`, { token: env.keys.reader })).body.inbound_email;
      const r = await env.stack.call('POST', `/api/v1/inbound-emails/${id}/retry`, { token: env.keys.writer });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ emitted: true });
      const { rows } = await env.stack.sql.query(`SELECT project_id, event, data FROM outbox WHERE data->>'id' = $1`, [id]);
      expect(rows).toHaveLength(1);
      const { text_body: _t, html_body: _h, headers: _hd, ...metadata } = record;
      expect(rows[0]).toEqual({ project_id: env.tenant.project.id, event: 'inbound.received', data: metadata });
      // Handed to the webhook dispatcher after the answer.
      await eventually(
        async () => (await env.stack.sql.query(`SELECT handed_over_at FROM outbox WHERE data->>'id' = $1`, [id])).rows[0].handed_over_at,
        (at) => at !== null,
      );
      expect(JSON.stringify(rows[0].data)).not.toMatch(/text 1|html 1/);
      expect((await env.stack.sql.query('SELECT * FROM inbound_emails WHERE id = $1', [id])).rows).toEqual(before);
    }
  });

  test('each retry emits again', async () => {
    const [id] = await seedInbound(env.tenant.project.id, 1);
    for (let i = 0; i < 2; i++) expect((await env.stack.call('POST', `/api/v1/inbound-emails/${id}/retry`, { token: env.keys.writer })).body).toEqual({ emitted: true });
    expect((await env.stack.sql.query(`SELECT 1 FROM outbox WHERE data->>'id' = $1`, [id])).rowCount).toBe(2);
  });

  test('another project\'s id is 404 and emits nothing; a non-UUID is 400', async () => {
    const [foreign] = await seedInbound(env.other.project.id, 1);
    const before = await outboxCount();
    const r = await env.stack.call('POST', `/api/v1/inbound-emails/${foreign}/retry`, { token: env.keys.writer });
    expect(r).toMatchObject({ status: 404, body: { error: 'inbound email not found' } });
    const bad = await env.stack.call('POST', '/api/v1/inbound-emails/abc/retry', { token: env.keys.writer });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid param: id: must be a UUID', fields: { id: 'must be a UUID' } } });
    expect(await outboxCount()).toBe(before);
  });
});

describe('GET /api/v1/inbound-emails/{id}/raw', () => {
  test('404 when the raw bytes were not stored, or are missing from storage', async () => {
    const [notStored] = await seedInbound(env.tenant.project.id, 1, { rawKey: null });
    const [missing] = await seedInbound(env.tenant.project.id, 1, { rawKey: `inbound/${env.tenant.project.id}/${crypto.randomUUID()}/raw.eml` });
    for (const id of [notStored, missing]) {
      const r = await env.stack.call('GET', `/api/v1/inbound-emails/${id}/raw`, { token: env.keys.reader });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'raw message not stored' });
    }
  });

  test('another project\'s id is 404 as a record; a non-UUID is 400', async () => {
    const [foreign] = await seedInbound(env.other.project.id, 1, { rawKey: `inbound/${env.other.project.id}/x/raw.eml` });
    const r = await env.stack.call('GET', `/api/v1/inbound-emails/${foreign}/raw`, { token: env.keys.reader });
    expect(r).toMatchObject({ status: 404, body: { error: 'inbound email not found' } });
    const bad = await env.stack.call('GET', '/api/v1/inbound-emails/raw/raw', { token: env.keys.reader });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid param: id: must be a UUID', fields: { id: 'must be a UUID' } } });
  });
});

describe('GET /api/v1/inbound-emails/{uuid}/attachments/{idx}', () => {
  test('an index past the list is 404 saying how many there are; bytes not in storage are 404', async () => {
    const [id] = await seedInbound(env.tenant.project.id, 1, { attachments: [{ filename: 'a.pdf', content_type: 'application/pdf', size: 3 }] });
    const past = await env.stack.call('GET', `/api/v1/inbound-emails/${id}/attachments/1`, { token: env.keys.reader });
    expect(past).toMatchObject({ status: 404, body: { error: 'attachment 1 not found (the message has 1)' } });
    const huge = await env.stack.call('GET', `/api/v1/inbound-emails/${id}/attachments/99999999999999999999`, { token: env.keys.reader });
    expect(huge.status).toBe(404);
    const notStored = await env.stack.call('GET', `/api/v1/inbound-emails/${id}/attachments/0`, { token: env.keys.reader });
    expect(notStored).toMatchObject({ status: 404, body: { error: 'attachment 0 not stored' } });
  });

  test.each([
    ['-1', 'idx', 'must be a non-negative integer'],
    ['1.5', 'idx', 'must be a non-negative integer'],
    ['first', 'idx', 'must be a non-negative integer'],
    ['1e3', 'idx', 'must be a non-negative integer'],
  ])('idx %j is 400 naming idx', async (idx, field, problem) => {
    const [id] = await seedInbound(env.tenant.project.id, 1);
    const r = await env.stack.call('GET', `/api/v1/inbound-emails/${id}/attachments/${idx}`, { token: env.keys.reader });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid param: ${field}: ${problem}`, fields: { [field]: problem } });
  });

  test('a non-UUID message id is 400 naming uuid; another project\'s is 404', async () => {
    const bad = await env.stack.call('GET', '/api/v1/inbound-emails/nope/attachments/0', { token: env.keys.reader });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid param: uuid: must be a UUID', fields: { uuid: 'must be a UUID' } } });
    const [foreign] = await seedInbound(env.other.project.id, 1, { attachments: [{ filename: 'a.pdf', content_type: 'application/pdf', size: 3 }] });
    const r = await env.stack.call('GET', `/api/v1/inbound-emails/${foreign}/attachments/0`, { token: env.keys.reader });
    expect(r).toMatchObject({ status: 404, body: { error: 'inbound email not found' } });
  });
});

describe('stored bytes, through the relay channel (POST /relay/v1/inbound)', () => {
  const PDF = new Uint8Array(Array.from({ length: 256 }, (_, i) => i)); // every byte value
  const HTML = new TextEncoder().encode('<script>alert(1)</script>');
  const BIN = new TextEncoder().encode('opaque');
  const RAW = new TextEncoder().encode('From: Ann <ann@example.org>\r\nSubject: Files\r\n\r\nsee attached\r\n');
  const ATTACHMENTS = [
    { filename: 'Übersicht "Q3".pdf', content_type: 'application/pdf', bytes: PDF },
    { filename: 'page.html', content_type: 'text/html', bytes: HTML },
    { filename: 'odd\r\nname.bin', content_type: 'not a media type', bytes: BIN },
  ];
  let nodeToken: string;
  let mineDomain: string;
  let theirDomain: string;
  let otherReader: string;

  beforeAll(async () => {
    mineDomain = `acme-${crypto.randomUUID().slice(0, 8)}.example`;
    theirDomain = `globex-${crypto.randomUUID().slice(0, 8)}.example`;
    const mine = await env.stack.call('POST', '/api/v1/domains', { token: (await env.tenant.key(['domains:write'])).token, body: { name: mineDomain } });
    const theirs = await env.stack.call('POST', '/api/v1/domains', { token: (await env.other.key(['domains:write'])).token, body: { name: theirDomain } });
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    await proveOwnership(env.stack, mine.body.domain.id);
    await proveOwnership(env.stack, theirs.body.domain.id);
    const enrolled = await env.stack.call('POST', '/relay/v1/enroll', { token: (await env.tenant.key(['relay:write'])).token, body: { name: 'mx-test' } });
    expect(enrolled.status).toBe(201);
    nodeToken = enrolled.body.token;
    // It forwards for both projects' domains: an operator's node.
    await env.stack.sql.query('UPDATE relay_nodes SET installation_wide = true WHERE id = $1', [enrolled.body.node.id]);
    otherReader = (await env.other.key(['inbound:read'])).token;
  });

  /** Forwards one message as a relay node does; returns the edge's answer. */
  async function forward(rcptTo: string[], opts: { parsedOk?: boolean; messageId?: string } = {}) {
    const parsedOk = opts.parsedOk ?? true;
    const spoolId = `test-${crypto.randomUUID()}`;
    const meta = {
      spool_id: spoolId, received_at: new Date().toISOString(), client_ip: '203.0.113.9', helo: 'mail.example.org',
      mail_from: 'ann@example.org', rcpt_to: rcptTo, size: RAW.length, auth: AUTH, dmarc_policy: 'none', smtp_rejected: false,
      parsed: parsedOk
        ? { ok: true, error: null, message_id: opts.messageId ?? '<files@example.org>', subject: 'Files', text: 'see attached', html: '', headers: { subject: 'Files' },
            attachments: ATTACHMENTS.map((a) => ({ filename: a.filename, content_type: a.content_type, size: a.bytes.length })) }
        : { ok: false, error: 'unparseable MIME', message_id: '', subject: '', text: '', html: '', headers: {}, attachments: [] },
    };
    const res = await relayForward(env.stack, nodeToken, { meta, raw: RAW, attachments: parsedOk ? ATTACHMENTS.map((a) => ({ bytes: a.bytes, type: a.content_type })) : [] });
    const body = res.body as { inbound_emails: { id: string; project_id: string; status: string }[] };
    expect(res.status, JSON.stringify(body)).toBe(200);
    const idOf = (projectId: string) => body.inbound_emails.find((e) => e.project_id === projectId)?.id;
    return { spoolId, mine: idOf(env.tenant.project.id)!, theirs: idOf(env.other.project.id) };
  }

  const download = async (path: string, token = env.keys.reader) => {
    const res = await fetch(`${env.stack.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
  };

  test('raw: the bytes as message/rfc822, named <id>.eml; has_raw true', async () => {
    const { mine } = await forward([`support@${mineDomain}`]);
    const r = await download(`/api/v1/inbound-emails/${mine}/raw`);
    expect(r.status).toBe(200);
    expect(r.bytes).toEqual(RAW);
    expect(r.headers.get('content-type')).toBe('message/rfc822');
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="${mine}.eml"`);
    expect(r.headers.get('content-length')).toBe(String(RAW.length));
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('cache-control')).toBe('private, no-store');
    const record = await env.stack.call('GET', `/api/v1/inbound-emails/${mine}`, { token: env.keys.reader });
    expect(record.body.inbound_email).toMatchObject({ has_raw: true, status: 'received', size: RAW.length, subject: 'Files' });
  });

  test('attachments by zero-based index: original type and name, cleaned; past the list 404', async () => {
    const { mine } = await forward([`support@${mineDomain}`]);
    const pdf = await download(`/api/v1/inbound-emails/${mine}/attachments/0`);
    expect(pdf.status).toBe(200);
    expect(pdf.bytes).toEqual(PDF);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.headers.get('content-disposition')).toBe(`attachment; filename="_bersicht Q3.pdf"; filename*=UTF-8''%C3%9Cbersicht%20Q3.pdf`);
    expect(pdf.headers.get('content-length')).toBe('256');

    const html = await download(`/api/v1/inbound-emails/${mine}/attachments/1`);
    expect(html.bytes).toEqual(HTML);
    expect(html.headers.get('content-type')).toBe('text/html');
    expect(html.headers.get('content-disposition')).toBe('attachment; filename="page.html"');
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(html.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");

    const odd = await download(`/api/v1/inbound-emails/${mine}/attachments/2`);
    expect(odd.bytes).toEqual(BIN);
    expect(odd.headers.get('content-type')).toBe('application/octet-stream');
    expect(odd.headers.get('content-disposition')).toBe('attachment; filename="oddname.bin"');

    const past = await env.stack.call('GET', `/api/v1/inbound-emails/${mine}/attachments/3`, { token: env.keys.reader });
    expect(past).toMatchObject({ status: 404, body: { error: 'attachment 3 not found (the message has 3)' } });
  });

  test('another project never reads this project\'s bytes: 404 as a record', async () => {
    const { mine } = await forward([`support@${mineDomain}`]);
    for (const path of [`/api/v1/inbound-emails/${mine}/raw`, `/api/v1/inbound-emails/${mine}/attachments/0`]) {
      const r = await env.stack.call('GET', path, { token: otherReader });
      expect(r).toMatchObject({ status: 404, body: { error: 'inbound email not found' } });
    }
  });

  test('a message that could not be parsed is failed, and its raw bytes download', async () => {
    const { mine } = await forward([`support@${mineDomain}`], { parsedOk: false });
    const record = await env.stack.call('GET', `/api/v1/inbound-emails/${mine}`, { token: env.keys.reader });
    expect(record.body.inbound_email).toMatchObject({ status: 'failed', status_reason: 'unparseable MIME', has_raw: true, attachments: [] });
    const raw = await download(`/api/v1/inbound-emails/${mine}/raw`);
    expect(raw.status).toBe(200);
    expect(raw.bytes).toEqual(RAW);
    const none = await env.stack.call('GET', `/api/v1/inbound-emails/${mine}/attachments/0`, { token: env.keys.reader });
    expect(none).toMatchObject({ status: 404, body: { error: 'attachment 0 not found (the message has 0)' } });
  });

  test('a message without a Message-ID (or unparsed) has message_id null, not "", in the record, the list and the event', async () => {
    const { mine: bare } = await forward([`support@${mineDomain}`], { messageId: '' });
    const { mine: unparsed } = await forward([`support@${mineDomain}`], { parsedOk: false });
    const { mine: usual } = await forward([`support@${mineDomain}`]);
    const list = await env.stack.call('GET', '/api/v1/inbound-emails?limit=200', { token: env.keys.reader });
    const listed = new Map((list.body.inbound_emails as { id: string; message_id: unknown }[]).map((e) => [e.id, e.message_id]));
    for (const [id, expected] of [[bare, null], [unparsed, null], [usual, '<files@example.org>']] as const) {
      const record = await env.stack.call('GET', `/api/v1/inbound-emails/${id}`, { token: env.keys.reader });
      expect(record.body.inbound_email.message_id, id).toBe(expected);
      expect(listed.get(id), id).toBe(expected);
      const { rows } = await env.stack.sql.query(`SELECT data FROM outbox WHERE event = 'inbound.received' AND data->>'id' = $1`, [id]);
      expect(rows.map((r) => r.data.message_id), id).toEqual([expected]);
    }
  });

  test('retry emits the same event data ingest emitted', async () => {
    const { mine } = await forward([`support@${mineDomain}`]);
    expect((await env.stack.call('POST', `/api/v1/inbound-emails/${mine}/retry`, { token: env.keys.writer })).body).toEqual({ emitted: true });
    const { rows } = await env.stack.sql.query(`SELECT event, data FROM outbox WHERE data->>'id' = $1 ORDER BY id`, [mine]);
    expect(rows).toHaveLength(2);
    expect(rows[1]).toEqual(rows[0]);
    expect(rows[0].event).toBe('inbound.received');
  });

  test('delete removes the record, then its objects; the other project\'s copy of the same message stays', async () => {
    const { spoolId, mine, theirs } = await forward([`support@${mineDomain}`, `sales@${theirDomain}`]);
    expect(theirs).toBeDefined();
    const r = await env.stack.call('DELETE', `/api/v1/inbound-emails/${mine}`, { token: env.keys.deleter });
    expect(r.status).toBe(204);
    expect((await env.stack.sql.query('SELECT 1 FROM inbound_emails WHERE id = $1', [mine])).rowCount).toBe(0);

    // A record pointing at the same keys again shows whether the bytes are still there.
    const prefix = `inbound/${env.tenant.project.id}/${encodeURIComponent(spoolId)}/`;
    const { rows: [probe] } = await env.stack.sql.query(
      `INSERT INTO inbound_emails (project_id, spool_id, sender, auth, raw_key, attachments, size, status, received_at)
       VALUES ($1, $2, 'ann@example.org', $3, $4, $5, 1, 'received', now()) RETURNING id`,
      [env.tenant.project.id, spoolId, JSON.stringify(AUTH), `${prefix}raw.eml`, JSON.stringify(ATTACHMENTS.map(({ bytes: _b, ...m }) => ({ ...m, size: 1 })))],
    );
    expect(await env.stack.call('GET', `/api/v1/inbound-emails/${probe.id}/raw`, { token: env.keys.reader }))
      .toMatchObject({ status: 404, body: { error: 'raw message not stored' } });
    for (const idx of [0, 1, 2]) {
      expect(await env.stack.call('GET', `/api/v1/inbound-emails/${probe.id}/attachments/${idx}`, { token: env.keys.reader }))
        .toMatchObject({ status: 404, body: { error: `attachment ${idx} not stored` } });
    }

    const theirsRaw = await download(`/api/v1/inbound-emails/${theirs}/raw`, otherReader);
    expect(theirsRaw.status).toBe(200);
    expect(theirsRaw.bytes).toEqual(RAW);
    expect((await download(`/api/v1/inbound-emails/${theirs}/attachments/0`, otherReader)).bytes).toEqual(PDF);
  });
});

describe('permissions, sessions and audit', () => {
  test('reads need inbound:read, retry inbound:write, delete inbound:delete; refusals change nothing', async () => {
    const [id] = await seedInbound(env.tenant.project.id, 1);
    const none = (await env.tenant.key(['domains:read'])).token;
    const [rows, outbox] = [await inboundCount(), await outboxCount()];
    const cases: [string, string, string, string][] = [
      ['GET', '/api/v1/inbound-emails', env.keys.writer, 'permission inbound:read required'],
      ['GET', '/api/v1/inbound-emails/stats', env.keys.deleter, 'permission inbound:read required'],
      ['GET', `/api/v1/inbound-emails/${id}`, env.keys.writer, 'permission inbound:read required'],
      ['GET', `/api/v1/inbound-emails/${id}/raw`, env.keys.writer, 'permission inbound:read required'],
      ['GET', `/api/v1/inbound-emails/${id}/attachments/0`, env.keys.writer, 'permission inbound:read required'],
      ['POST', `/api/v1/inbound-emails/${id}/retry`, env.keys.reader, 'permission inbound:write required'],
      ['DELETE', `/api/v1/inbound-emails/${id}`, env.keys.reader, 'permission inbound:delete required'],
      ['DELETE', `/api/v1/inbound-emails/${id}`, env.keys.writer, 'permission inbound:delete required'],
      ['GET', '/api/v1/inbound-emails', none, 'no access to inbound in this project'],
      ['POST', `/api/v1/inbound-emails/${id}/retry`, none, 'no access to inbound in this project'],
    ];
    for (const [method, path, token, error] of cases) {
      const r = await env.stack.call(method, path, { token });
      expect([method, path, r.status, r.body]).toEqual([method, path, 403, { error }]);
    }
    expect([await inboundCount(), await outboxCount()]).toEqual([rows, outbox]);
  });

  test('a plain member reads and retries but cannot delete', async () => {
    const [id] = await seedInbound(env.tenant.project.id, 1);
    const { rows: [user] } = await env.stack.sql.query(`INSERT INTO users (email) VALUES ($1) RETURNING id`, [`${crypto.randomUUID()}@example.com`]);
    await env.stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'member')`, [env.tenant.project.id, user.id]);
    const headers = { cookie: await sessionCookie(env.stack, user.id), 'X-Service-Project-Id': env.tenant.project.id, origin: env.stack.url };
    expect((await env.stack.call('GET', `/api/v1/inbound-emails/${id}`, { headers })).status).toBe(200);
    expect((await env.stack.call('POST', `/api/v1/inbound-emails/${id}/retry`, { headers })).status).toBe(200);
    const r = await env.stack.call('DELETE', `/api/v1/inbound-emails/${id}`, { headers });
    expect(r).toMatchObject({ status: 403, body: { error: 'permission inbound:delete required' } });
  });

  test('retry and delete are recorded as inboundemail.retry and inboundemail.deleted; reads are not', async () => {
    const [id] = await seedInbound(env.tenant.project.id, 1);
    const before = await settledAuditEvents(env.stack, env.admin);
    await env.stack.call('GET', `/api/v1/inbound-emails/${id}`, { token: env.keys.reader });
    await env.stack.call('POST', `/api/v1/inbound-emails/${id}/retry`, { token: env.keys.writer });
    await env.stack.call('DELETE', `/api/v1/inbound-emails/${id}`, { token: env.keys.deleter });
    const events = addedEvents(before, await settledAuditEvents(env.stack, env.admin)).filter((e) => e.project_id === env.tenant.project.id);
    expect(events.map((e) => [e.type, e.status])).toEqual([['inboundemail.retry', 200], ['inboundemail.deleted', 204]]);
  });
});
