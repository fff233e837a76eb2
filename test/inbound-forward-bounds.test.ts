// Bounds on one forwarded message at the edge (docs/relay-protocol.md,
// "Limits"): the meta the edge holds in memory is capped well below the
// isolate's 128 MB, a meta length the body cannot hold is refused before any
// of it is read, and the R2 calls one forward makes are bounded (attachments
// stored per message, copies per project). Default inbound.max_message_size
// (25 MiB), so the meta's own cap (6 MiB) is the one that applies.
import { beforeAll, describe, expect, test } from 'vitest';
import { enroll, forward, inboundBody, inboundMeta, makeInstallationWide, registerDomain, type EnrolledNode } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';

const MiB = 1_048_576;
const META_CAP = 6 * MiB;
const env = useTenantStack({ keys: { reader: ['inbound:read'] } });
let node: EnrolledNode;
let otherReader: string;

beforeAll(async () => {
  await registerDomain(env.stack, env.tenant.project.id, 'acme-bounds.test');
  await registerDomain(env.stack, env.other.project.id, 'globex-bounds.test');
  node = await enroll(env.stack, (await env.tenant.key(['relay:write'])).token);
  await makeInstallationWide(env.stack, node.id);
  otherReader = (await env.other.key(['inbound:read'])).token;
});

const RAW = 'From: Ann <ann@example.org>\r\nSubject: Files\r\n\r\nsee attached\r\n';
const BOTH = ['support@acme-bounds.test', 'sales@globex-bounds.test'];

async function records(spoolId: string) {
  const { rows } = await env.stack.sql.query('SELECT * FROM inbound_emails WHERE spool_id = $1 ORDER BY project_id', [spoolId]);
  return rows;
}
const download = async (path: string, token: string) => {
  const res = await fetch(`${env.stack.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) };
};
const readerOf = (projectId: string) => (projectId === env.tenant.project.id ? env.keys.reader : otherReader);
/** `n` attachments of a few distinct bytes each, with their meta entries. */
const attachmentsOf = (n: number) => Array.from({ length: n }, (_, i) => ({ filename: `a${i}.txt`, content_type: 'text/plain', bytes: `attachment ${i}` }));
const metaWith = (to: string[], files: ReturnType<typeof attachmentsOf>) => inboundMeta(to, {
  parsed: { ok: true, error: null, message_id: '<f@example.org>', subject: 'Files', text: 'see attached', html: '', headers: { subject: 'Files' },
    attachments: files.map((f) => ({ filename: f.filename, content_type: f.content_type, size: f.bytes.length })) },
});
const send = (meta: Record<string, unknown>, files: ReturnType<typeof attachmentsOf>) =>
  forward(env.stack, node.token, { meta, raw: RAW, attachments: files.map((f) => ({ bytes: f.bytes, type: f.content_type })) });

describe('the meta, the one piece the edge holds in memory (item 5)', () => {
  test('a meta over 6 MiB is 413 (the node then forwards the raw message alone), though the message limit is 25 MiB; nothing is stored', async () => {
    const meta = inboundMeta(['support@acme-bounds.test']);
    meta.parsed.text = 'x'.repeat(3 * MiB);
    meta.parsed.html = 'y'.repeat(3 * MiB);
    const sent = inboundBody({ meta, raw: RAW });
    const metaLength = Number(sent.headers['edgemail-meta-length']);
    expect(metaLength).toBeGreaterThan(META_CAP);
    const r = await forward(env.stack, node.token, sent);
    expect(r.status).toBe(413);
    expect(r.body.error).toBe(`meta larger than ${META_CAP} bytes (edgemail-meta-length: ${metaLength}): forward the raw message alone`);
    expect(await records(meta.spool_id)).toEqual([]);
  });

  test('text and html at their 1 MiB cap each, with escapes and headers, fit: stored whole', async () => {
    const meta = inboundMeta(['support@acme-bounds.test']);
    meta.parsed.text = 'a "quoted"\tline\n'.repeat(MiB / 16);
    meta.parsed.html = '<p class="x">\n'.repeat(Math.floor(MiB / 14));
    meta.parsed.headers = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`x-h${i}`, 'v'.repeat(1000)]));
    const r = await forward(env.stack, node.token, { meta, raw: RAW });
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    const [row] = await records(meta.spool_id);
    expect(row.status).toBe('received');
    expect(row.text_body).toBe(meta.parsed.text);
    expect(row.html_body).toBe(meta.parsed.html);
  });

  test('a meta length longer than the body is 400 naming edgemail-meta-length, before any of it is read; nothing is stored', async () => {
    const meta = inboundMeta(['support@acme-bounds.test']);
    const sent = inboundBody({ meta, raw: RAW });
    for (const claimed of [sent.body.length + 1, 5 * MiB]) {
      const r = await forward(env.stack, node.token, { body: sent.body, headers: { ...sent.headers, 'edgemail-meta-length': String(claimed) } });
      expect(r.status, String(claimed)).toBe(400);
      expect(r.body.error).toBe(`invalid body: edgemail-meta-length: must be at most the body's length (content-length ${sent.body.length}), got ${claimed}`);
      expect(Object.keys(r.body.fields)).toEqual(['edgemail-meta-length']);
    }
    expect(await records(meta.spool_id)).toEqual([]);
    expect((await forward(env.stack, node.token, sent)).status).toBe(200);
  });
});

describe('R2 calls per forward are bounded (item 6)', () => {
  test('100 attachments for two projects are stored, each downloadable in each project', async () => {
    const files = attachmentsOf(100);
    const meta = metaWith(BOTH, files);
    const r = await send(meta, files);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const rows = await records(meta.spool_id);
    expect(rows.map((row) => [row.status, row.attachments.length])).toEqual([['received', 100], ['received', 100]]);
    for (const row of rows) {
      const last = await download(`/api/v1/inbound-emails/${row.id}/attachments/99`, readerOf(row.project_id));
      expect(last.status).toBe(200);
      expect(new TextDecoder().decode(last.bytes)).toBe('attachment 99');
    }
  });

  test('101 attachments: stored failed in each project, naming why, with the raw message kept and no attachment objects', async () => {
    const files = attachmentsOf(101);
    const meta = metaWith(BOTH, files);
    const r = await send(meta, files);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.inbound_emails.map((e: { status: string }) => e.status)).toEqual(['failed', 'failed']);
    const rows = await records(meta.spool_id);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.status_reason).toBe('101 attachments, over the 100 stored per message; only the raw message is kept');
      expect(row.attachments).toEqual([]);
      expect(row.subject).toBe('Files');
      const raw = await download(`/api/v1/inbound-emails/${row.id}/raw`, readerOf(row.project_id));
      expect(raw.status).toBe(200);
      expect(new TextDecoder().decode(raw.bytes)).toBe(RAW);
      expect((await download(`/api/v1/inbound-emails/${row.id}/attachments/0`, readerOf(row.project_id))).status).toBe(404);
    }
  });

  describe('a message for many projects', () => {
    const names: string[] = [];
    beforeAll(async () => {
      // 251 more projects, each proving a domain: seeded in SQL (projects need no owner to receive).
      const { rows } = await env.stack.sql.query(`
        WITH p AS (INSERT INTO projects (name) SELECT 'many-' || n FROM generate_series(1, 251) n RETURNING id, name)
        INSERT INTO domains (project_id, name, ownership_proven_at) SELECT id, name || '.bounds.test', now() FROM p RETURNING name`);
      names.push(...rows.map((r) => r.name as string).sort());
    });

    test('100 attachments for three projects take 505 R2 calls, over 500: stored failed in each, naming the calls, raw kept', async () => {
      const files = attachmentsOf(100);
      const meta = metaWith([...BOTH, `x@${names[0]}`], files);
      const r = await send(meta, files);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const rows = await records(meta.spool_id);
      expect(rows.map((row) => row.status)).toEqual(['failed', 'failed', 'failed']);
      expect(rows[0].status_reason).toBe('100 attachments for 3 projects take 505 storage calls, over the 500 one message may make; only the raw message is kept');
      expect(rows.every((row) => row.attachments.length === 0)).toBe(true);
    });

    test('recipients in 251 projects are 400 naming rcpt_to (the node dead-letters it: no retry could store it); nothing is stored', async () => {
      const meta = inboundMeta(names.slice(0, 251).map((n) => `x@${n}`));
      const r = await forward(env.stack, node.token, { meta, raw: RAW });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid meta: meta.rcpt_to: recipients in 251 projects; storing one message for each takes 501 storage calls, over the 500 one message may make');
      expect(r.body.fields).toEqual({ 'meta.rcpt_to': 'recipients in at most 250 projects per message' });
      expect(await records(meta.spool_id)).toEqual([]);
      // 250 projects fit: the raw message stored for each.
      const fits = inboundMeta(names.slice(0, 250).map((n) => `x@${n}`));
      expect((await forward(env.stack, node.token, { meta: fits, raw: RAW })).status).toBe(200);
      expect(await records(fits.spool_id)).toHaveLength(250);
    });
  });
});
