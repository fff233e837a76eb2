// The email log (issue 9 "Email log", docs/sending.md "The email log"):
// GET /api/v1/emails keyset-paged newest first with its filters, GET
// /api/v1/emails/{id} with attempts, content and custom headers, and the
// sandbox list reading the same records.
import { beforeAll, describe, expect, test } from 'vitest';
import { seedProject, type SeededProject } from './support/stack.js';
import { useTenantStack } from './support/tenant-stack.js';

const env = useTenantStack({ keys: { sender: ['emails:write', 'emails:read', 'domains:write'], writerOnly: ['emails:write'] } });

let paged: SeededProject;
let pagedToken: string;
let otherEmailId: string;

async function verify(token: string, name: string) {
  const d = await env.stack.call('POST', '/api/v1/domains', { token, body: { name } });
  expect(d.status).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [d.body.domain.id]);
}

const send = (body: Record<string, unknown>, token = env.keys.sender) =>
  env.stack.call('POST', '/api/v1/emails/send', { token, body: { from: 'news@acme.test', subject: 'Log', text: 'body', ...body } });
const list = (query: string, token = env.keys.sender) => env.stack.call('GET', `/api/v1/emails${query}`, { token });

beforeAll(async () => {
  await verify(env.keys.sender, 'acme.test');
  const otherToken = (await env.other.key(['emails:write', 'domains:write'])).token;
  await verify(otherToken, 'globex.test');
  otherEmailId = (await send({ from: 'x@globex.test', to: ['secret@example.org'] }, otherToken)).body.emails[0].id;

  paged = await seedProject(env.stack, env.admin, 'paged');
  pagedToken = (await paged.key(['emails:write', 'emails:read', 'domains:write'])).token;
  await verify(pagedToken, 'paged.test');
});

describe('GET /api/v1/emails', () => {
  test('pages newest first by (created_at, id) with before and before_id, rows sharing a created_at included once', async () => {
    for (let i = 0; i < 7; i++) {
      const r = await send({ from: 'p@paged.test', to: [`r${i}@example.org`] }, pagedToken);
      expect(r.status).toBe(201);
    }
    // Four rows share one instant with microseconds, across a page boundary.
    await env.stack.sql.query(`UPDATE emails SET created_at = '2026-03-01T10:00:00.123456Z' WHERE project_id = $1 AND recipient IN ('r1@example.org','r2@example.org','r3@example.org','r4@example.org')`, [paged.project.id]);
    const { rows } = await env.stack.sql.query('SELECT id FROM emails WHERE project_id = $1 ORDER BY created_at DESC, id DESC', [paged.project.id]);
    const expected = rows.map((r) => r.id);

    const seen: string[] = [];
    const sizes: number[] = [];
    let query = '?limit=2';
    for (;;) {
      const r = await list(query, pagedToken);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['emails', 'next']);
      sizes.push(r.body.emails.length);
      seen.push(...r.body.emails.map((e: { id: string }) => e.id));
      if (!r.body.next) break;
      const last = r.body.emails.at(-1);
      expect(r.body.next).toEqual({ before: last.created_at, before_id: last.id });
      query = `?limit=2&before=${encodeURIComponent(r.body.next.before)}&before_id=${r.body.next.before_id}`;
    }
    expect(sizes).toEqual([2, 2, 2, 1]);
    expect(seen).toEqual(expected);
    const tied = (await list('?limit=200', pagedToken)).body.emails.filter((e: { created_at: string }) => e.created_at.startsWith('2026-03-01'));
    expect(tied.map((e: { created_at: string }) => e.created_at)).toEqual(Array(4).fill('2026-03-01T10:00:00.123456Z'));
    expect((await list('', pagedToken)).body.emails).toHaveLength(7); // default limit 50
  });

  test('filters: status, recipient (exact, case-insensitive), tag, since and until', async () => {
    const a = await send({ to: ['Filter.A@Example.org'], tags: ['alpha', 'common'] });
    const b = await send({ to: ['filter.b@example.org'], cc: ['filter.c@example.org'], tags: ['beta', 'common'] });
    await env.stack.sql.query(`UPDATE emails SET status = 'sent', sent_at = now() WHERE id = $1`, [b.body.emails[0].id]);
    await env.stack.sql.query(`UPDATE emails SET created_at = '2026-02-01T00:00:00Z' WHERE id = $1`, [a.body.emails[0].id]);
    const ids = async (query: string) => (await list(query)).body.emails.map((e: { id: string }) => e.id);

    expect(await ids('?recipient=filter.a@example.org')).toEqual([a.body.emails[0].id]);
    expect(await ids('?recipient=FILTER.A%40EXAMPLE.ORG')).toEqual([a.body.emails[0].id]);
    expect(await ids('?recipient=filter.a')).toEqual([]);
    expect(new Set(await ids('?tag=beta'))).toEqual(new Set([b.body.emails[0].id, b.body.emails[1].id]));
    expect(new Set(await ids('?tag=common'))).toEqual(new Set([a.body.emails[0].id, b.body.emails[0].id, b.body.emails[1].id]));
    expect(await ids('?tag=Beta')).toEqual([]);
    expect(await ids('?status=sent')).toEqual([b.body.emails[0].id]);
    expect(await ids('?status=sent&tag=alpha')).toEqual([]);
    expect(await ids('?until=2026-02-01T00:00:01Z&tag=common')).toEqual([a.body.emails[0].id]);
    expect(await ids('?since=2026-02-01T00:00:00Z&until=2026-02-01T00:00:00.001Z')).toEqual([a.body.emails[0].id]);
    expect(await ids('?since=2026-02-01T00:00:00.001Z&tag=alpha')).toEqual([]);
  });

  test('never shows another project\'s rows', async () => {
    const all = (await list('?limit=200')).body.emails;
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((e: { project_id: string }) => e.project_id === env.tenant.project.id)).toBe(true);
    expect(all.map((e: { id: string }) => e.id)).not.toContain(otherEmailId);
  });

  test.each([
    ['limit=0', 'limit', 'must be an integer from 1 to 200'],
    ['limit=201', 'limit', 'must be an integer from 1 to 200'],
    ['status=delivered', 'status', 'must be one of queued, sending, sent, failed, suppressed, captured, bounced, complained, canceled'],
    ['since=yesterday', 'since', 'must be an RFC 3339 timestamp'],
    ['until=2026-01-01', 'until', 'must be an RFC 3339 timestamp'],
    ['before=2026-01-01T00:00:00Z', 'before_id', 'required with before'],
    [`before_id=${crypto.randomUUID()}`, 'before', 'required with before_id'],
    ['offset=50', 'offset', 'not supported: page with before and before_id'],
  ])('?%s → 400 naming the parameter', async (query, field, problem) => {
    const r = await list(`?${query}`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid query: ${field}: ${problem}`, fields: { [field]: problem } });
  });

  test('needs emails:read', async () => {
    const r = await list('', env.keys.writerOnly);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'permission emails:read required' });
  });
});

describe('GET /api/v1/emails/{id}', () => {
  test('the record with content, custom headers and every delivery attempt', async () => {
    const sent = await send({
      from: 'Acme <news@acme.test>', to: ['ann@example.org'], cc: ['bob@example.org'], reply_to: ['help@acme.test'],
      subject: 'Receipt', text: 'Thanks', html: '<p>Thanks</p>', headers: { 'X-Correlation': 'c-77' }, tags: ['receipt'],
      attachments: [{ filename: 'r.txt', content: Buffer.from('receipt').toString('base64') }],
    });
    expect(sent.status).toBe(201);
    const [ann] = sent.body.emails;
    await env.stack.sql.query(
      `INSERT INTO email_attempts (email_id, attempt, outcome, smtp_code, reply, server, started_at, duration_ms) VALUES
         ($1, 2, 'sent', 250, '250 2.0.0 Ok: queued as X', 'mx.example.org:25', '2026-03-01T10:05:00Z', 80),
         ($1, 1, 'deferred', 451, '451 4.7.1 try later', 'mx.example.org:25', '2026-03-01T10:00:00Z', 120)`, [ann.id]);
    await env.stack.sql.query(`UPDATE emails SET status = 'sent', attempts = 2, smtp_reply = '250 2.0.0 Ok: queued as X', sent_at = '2026-03-01T10:05:00.080Z' WHERE id = $1`, [ann.id]);

    const r = await env.stack.call('GET', `/api/v1/emails/${ann.id}`, { token: env.keys.sender });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      email: {
        ...ann,
        status: 'sent', attempts: 2, smtp_reply: '250 2.0.0 Ok: queued as X', sent_at: '2026-03-01T10:05:00.080Z',
        headers: { 'X-Correlation': 'c-77' },
        message_id_header: `<${sent.body.message_id}@acme.test>`,
        reply_to: ['help@acme.test'], text: 'Thanks', html: '<p>Thanks</p>',
        attachments: [{ filename: 'r.txt', content_type: 'text/plain', size: 7 }],
        // Issue 18: the detail names the template a send rendered (none here).
        template_id: null, template_version_id: null,
        delivery_attempts: [
          { attempt: 1, outcome: 'deferred', smtp_code: 451, reply: '451 4.7.1 try later', server: 'mx.example.org:25', node_id: null, started_at: '2026-03-01T10:00:00.000Z', duration_ms: 120 },
          { attempt: 2, outcome: 'sent', smtp_code: 250, reply: '250 2.0.0 Ok: queued as X', server: 'mx.example.org:25', node_id: null, started_at: '2026-03-01T10:05:00.000Z', duration_ms: 80 },
        ],
      },
    });
    // The list shows the same record, without the detail's extras.
    const listed = (await list(`?recipient=ann@example.org&limit=200`)).body.emails.find((e: { id: string }) => e.id === ann.id);
    expect(listed).toEqual({ ...ann, status: 'sent', attempts: 2, smtp_reply: '250 2.0.0 Ok: queued as X', sent_at: '2026-03-01T10:05:00.080Z' });
  });

  test('another project\'s id and an unknown id are 404 `email not found`; not a UUID is 400', async () => {
    for (const id of [otherEmailId, crypto.randomUUID()]) {
      const r = await env.stack.call('GET', `/api/v1/emails/${id}`, { token: env.keys.sender });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'email not found' });
      const attachment = await env.stack.call('GET', `/api/v1/emails/${id}/attachments/0`, { token: env.keys.sender });
      expect(attachment.status).toBe(404);
      expect(attachment.body).toEqual({ error: 'email not found' });
    }
    const bad = await env.stack.call('GET', '/api/v1/emails/not-a-uuid', { token: env.keys.sender });
    expect(bad.status).toBe(400);
    expect(bad.body.fields).toEqual({ id: 'must be a UUID' });
  });
});

describe('GET /api/v1/sandbox/emails', () => {
  test('the same records and paging, sandbox sends only', async () => {
    const sandbox = (await paged.key(['sandbox:write'], { sandbox: true })).token;
    const byRecipient: Record<string, string> = {};
    for (let i = 0; i < 3; i++) {
      const r = await send({ from: 'p@paged.test', to: [`s${i}@example.org`], tags: ['sb'] }, sandbox);
      expect(r.status).toBe(201);
      byRecipient[`s${i}@example.org`] = r.body.emails[0].id;
    }
    const { rows } = await env.stack.sql.query(
      `SELECT e.id FROM emails e JOIN outbound_messages m ON m.id = e.message_id WHERE m.sandbox AND e.project_id = $1 ORDER BY e.created_at DESC, e.id DESC`, [paged.project.id]);
    const captured = rows.map((r) => r.id as string);
    expect(new Set(captured)).toEqual(new Set(Object.values(byRecipient)));
    const first = await env.stack.call('GET', '/api/v1/sandbox/emails?limit=2', { token: sandbox });
    expect(first.status).toBe(200);
    expect(first.body.emails.map((e: { id: string }) => e.id)).toEqual(captured.slice(0, 2));
    expect(first.body.emails.every((e: { status: string; sandbox: boolean }) => e.status === 'captured' && e.sandbox)).toBe(true);
    const { before, before_id } = first.body.next;
    const second = await env.stack.call('GET', `/api/v1/sandbox/emails?limit=2&before=${encodeURIComponent(before)}&before_id=${before_id}`, { token: sandbox });
    expect(second.body).toEqual({ emails: [expect.objectContaining({ id: captured[2] })], next: null });
    const filtered = await env.stack.call('GET', '/api/v1/sandbox/emails?recipient=S1@example.org', { token: sandbox });
    expect(filtered.body.emails.map((e: { id: string }) => e.id)).toEqual([byRecipient['s1@example.org']]);
    // The main log shows them too, marked.
    const main = await list('?tag=sb', pagedToken);
    expect(main.body.emails.map((e: { id: string }) => e.id)).toEqual(captured);
  });
});
