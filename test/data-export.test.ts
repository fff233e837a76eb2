// The data export (issue 17 "Data export", docs/data-export.md): GET
// /api/v1/data/export streams every record of a project as NDJSON. A project
// with a record of every kind is built through the API and the relay channel
// (a delivered send with its attempt, mail forwarded by a relay node, webhook
// deliveries to a real receiver), exported, and every line compared with what
// the API's own routes return; no secret in the bytes, nothing of another
// project, counts that add up; the permission; a large table streamed whole.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { unseal } from '../edge/src/crypto/seal.js';
import { DKIM_SEAL_CONTEXT } from '../edge/src/services/domains/keys.js';
import { settledAuditEvents } from './support/audit.js';
import { proveOwnership } from './support/domain-ownership.js';
import { enroll, forward, inboundMeta, type EnrolledNode } from './support/relay.js';
import { seedProject, sessionCookie, type SeededProject } from './support/stack.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const env = useTenantStack({
  captureLogs: true,
  settings: { SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SERVICE_SMTP_SERVERS_ALLOW_PRIVATE_TARGETS: 'true' },
  keys: { all: ['*'], backup: ['data:read'], reader: ['emails:read', 'inbound:read'] },
});

const DOMAIN = 'acme-export.test';
const SMTP_PASSWORD = `smtp-pw-${crypto.randomUUID()}`;

interface Line { type: string; [k: string]: any }
interface Export { status: number; headers: Headers; bytes: string; lines: Line[] }

/** The export as the backup job reads it: the raw text, and each line parsed. */
async function exportWith(token: string, headers: Record<string, string> = {}): Promise<Export> {
  const res = await fetch(`${env.stack.url}/api/v1/data/export`, { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
  const bytes = await res.text();
  const lines = res.status === 200 ? bytes.split('\n').filter((l, i, all) => l !== '' || i !== all.length - 1).map((l) => JSON.parse(l) as Line) : [];
  return { status: res.status, headers: res.headers, bytes, lines };
}

const recordsOf = (lines: Line[], type: string) => lines.filter((l) => l.type === type).map((l) => l.data);
const byId = <T extends { id: string }>(list: T[]) => [...list].sort((a, b) => a.id.localeCompare(b.id));
const get = async (path: string, token = env.keys.all) => {
  const r = await env.stack.call('GET', path, { token });
  expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

let receiver: WebhookReceiver;
let node: EnrolledNode;
/** Every secret made for the tenant, as it must never appear. */
const secrets: string[] = [];
let tenantIds: string[];
let otherIds: string[];
let delivered: string;
let inboundId: string;
let full: Export;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  const call = (method: string, path: string, body?: unknown, token = env.keys.all) => env.stack.call(method, path, { token, body });
  const created = async (method: string, path: string, body?: unknown, token = env.keys.all) => {
    const r = await call(method, path, body, token);
    expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
    return r.body;
  };

  // Configuration: a domain (verified and proven), an SMTP server with a password, a webhook, a suppression, a relay node.
  const { domain } = await created('POST', '/api/v1/domains', { name: DOMAIN });
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domain.id]);
  await proveOwnership(env.stack, domain.id);
  await created('POST', '/api/v1/smtp-servers', { name: 'Relay', host: '192.0.2.25', username: 'acme', password: SMTP_PASSWORD });
  const { webhook } = await created('POST', '/api/v1/webhooks', { url: `${receiver.url}/hook`, events: ['*'] });
  const rotated = (await created('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`)).webhook.secret as string;
  await created('POST', '/api/v1/suppressions', { address: 'Gone@Example.org', reason: 'unsubscribe', detail: 'clicked the link' });
  node = await enroll(env.stack, env.keys.all, 'mx-export');
  // A template with an activated version (two languages, a stylesheet) and a draft.
  const { stylesheet } = await created('POST', '/api/v1/stylesheets', { name: 'brand', css: 'p { color: #333; }' });
  const { template } = await created('POST', '/api/v1/templates', { name: 'welcome', description: 'Sign-up mail' });
  const { version: v1 } = await created('POST', `/api/v1/templates/${template.id}/versions`, { stylesheet_id: stylesheet.id, sample_data: '{"name":"Ann"}' });
  await created('PUT', `/api/v1/templates/${template.id}/versions/${v1.id}/localizations`, {
    localizations: [{ language: 'en', subject: 'Hi {{name}}', html: '<p>Hello {{name}}</p>' }, { language: 'de', subject: 'Hallo {{name}}', text: 'Hallo {{name}}' }],
  });
  await created('POST', `/api/v1/templates/${template.id}/activate/${v1.id}`);
  await created('POST', `/api/v1/templates/${template.id}/versions`, {});

  // Mail: one send to two recipients, one of them delivered by the node with its attempt; a sandbox capture.
  const sent = await created('POST', '/api/v1/emails/send', {
    from: `Acme <news@${DOMAIN}>`, to: ['ann@example.org'], cc: ['bob@example.org'], subject: 'Export me', text: 'Hello', html: '<p>Hello</p>',
    headers: { 'X-Order': 'A-1' }, tags: ['export'],
  });
  const claimed = await created('POST', '/relay/v1/outbound/claim', { max: 1 }, node.token);
  expect(claimed.jobs).toHaveLength(1);
  const [job] = claimed.jobs;
  delivered = job.email_id;
  expect((await created('POST', '/relay/v1/outbound/results', {
    results: [{ email_id: job.email_id, attempt: job.attempt, outcome: 'sent', smtp_code: 250, reply: '250 2.0.0 Ok: queued', server: 'mx.example.org:25', started_at: new Date().toISOString(), duration_ms: 42 }],
  }, node.token)).accepted).toEqual([job.email_id]);
  const sandboxKey = await env.tenant.key(['sandbox:write'], { sandbox: true });
  await created('POST', '/api/v1/emails/send', { from: `news@${DOMAIN}`, to: ['sandboxed@example.org'], subject: 'Captured', text: 'x' }, sandboxKey.token);
  // A bounce against the other recipient, written directly (its sources are tested in bounces-*.test.ts).
  const bob = sent.emails.find((e: { recipient: string }) => e.recipient === 'bob@example.org');
  await env.stack.sql.query(
    `INSERT INTO bounces (project_id, email_id, recipient, type, source, smtp_code, status, diagnostic, remote_mta)
     VALUES ($1, $2, 'bob@example.org', 'hard', 'dsn', 550, '5.1.1', 'user unknown', 'mx.example.org')`, [env.tenant.project.id, bob.id]);

  // Inbound mail, forwarded by the node as it forwards what it received.
  const inbound = await forward(env.stack, node.token, { meta: inboundMeta([`support@${DOMAIN}`]), raw: 'Subject: Hello\r\n\r\nHi there\r\n' });
  expect(inbound.status, JSON.stringify(inbound.body)).toBe(200);
  inboundId = inbound.body.inbound_emails[0].id;

  // Everything the dispatcher was handed (email.sent, inbound.received, …) delivered and settled; the audit trail written.
  await eventually(
    async () => (await env.stack.sql.query(`SELECT status FROM webhook_deliveries WHERE project_id = $1`, [env.tenant.project.id])).rows,
    (rows) => rows.length >= 2 && rows.every((r) => r.status !== 'pending'), 15_000);
  await settledAuditEvents(env.stack, env.admin);
  // Last use is recorded at most once a minute: set in the future, no request of this file moves it, so the
  // export and the key list read the same value.
  await env.stack.sql.query(`UPDATE api_keys SET last_used_at = now() + interval '1 hour'`);

  // Another project with records of its own, which the tenant's export must never show.
  const otherKey = (await env.other.key(['*'])).token;
  const theirs = await env.stack.call('POST', '/api/v1/domains', { token: otherKey, body: { name: 'globex-export.test' } });
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [theirs.body.domain.id]);
  const theirSend = await env.stack.call('POST', '/api/v1/emails/send', { token: otherKey, body: { from: 'x@globex-export.test', to: ['secret@example.org'], subject: 'Not yours', text: 'x' } });
  expect(theirSend.status).toBe(201);
  await env.stack.call('POST', '/api/v1/suppressions', { token: otherKey, body: { address: 'theirs@example.org' } });
  otherIds = (await env.stack.sql.query(
    `SELECT id::text FROM api_keys WHERE project_id = $1 UNION ALL SELECT id::text FROM domains WHERE project_id = $1
     UNION ALL SELECT id::text FROM emails WHERE project_id = $1 UNION ALL SELECT id::text FROM suppressions WHERE project_id = $1`,
    [env.other.project.id])).rows.map((r) => r.id);

  // The secrets: key tokens and their hashes, the webhook secret (both), its sealed form, the SMTP password, the DKIM private key.
  secrets.push(...Object.values(env.keys), sandboxKey.token, node.token, webhook.secret, rotated, SMTP_PASSWORD);
  const sealed = await env.stack.sql.query(
    `SELECT key_hash AS v FROM api_keys UNION ALL SELECT key_hash FROM relay_nodes UNION ALL SELECT secret_sealed FROM webhooks
     UNION ALL SELECT password_sealed FROM smtp_servers WHERE password_sealed IS NOT NULL UNION ALL SELECT dkim_private_key_sealed FROM domains`);
  secrets.push(...sealed.rows.map((r) => r.v as string));
  const pem = await unseal((await env.stack.sql.query('SELECT dkim_private_key_sealed FROM domains WHERE id = $1', [domain.id])).rows[0].dkim_private_key_sealed, env.stack.encryptionKey, DKIM_SEAL_CONTEXT);
  expect(pem).toContain('PRIVATE KEY');
  // The PEM's base64 lines one by one: no part of the key may leak, not only the whole block.
  secrets.push(...pem.split('\n').filter((l) => l && !l.startsWith('-----')));
  expect(secrets.filter((s) => s.startsWith('myk_')).map((t) => createHash('sha256').update(t).digest('hex')).every((h) => secrets.includes(h))).toBe(true);

  tenantIds = (await env.stack.sql.query(
    `SELECT id::text FROM api_keys WHERE project_id = $1 UNION ALL SELECT id::text FROM emails WHERE project_id = $1`, [env.tenant.project.id])).rows.map((r) => r.id);
  full = await exportWith(env.keys.backup);
}, 60_000);

afterAll(async () => { await receiver?.close(); });

describe('GET /api/v1/data/export', () => {
  test('200 NDJSON: the header first, the end last, a line per record with counts that add up', () => {
    expect(full.status).toBe(200);
    expect(full.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(full.headers.get('content-disposition')).toBe(`attachment; filename="edgemail-export-${env.tenant.project.id}.ndjson"`);
    expect(full.headers.get('cache-control')).toBe('private, no-store');
    expect(full.bytes.endsWith('}\n')).toBe(true);

    const [first, ...rest] = full.lines;
    const last = rest.pop()!;
    expect(first).toEqual({ type: 'export', version: 1, project_id: env.tenant.project.id, started_at: expect.any(String) });
    expect(last).toEqual({ type: 'end', counts: expect.any(Object), finished_at: expect.any(String) });
    expect(Date.parse(last.finished_at)).toBeGreaterThanOrEqual(Date.parse(first!.started_at));
    expect(rest.every((l) => Object.keys(l).sort().join() === 'data,type')).toBe(true);

    const seen: Record<string, number> = {};
    for (const l of rest) seen[l.type] = (seen[l.type] ?? 0) + 1;
    const types = ['project', 'api_key', 'domain', 'smtp_server', 'webhook', 'relay_node', 'stylesheet', 'template', 'template_version', 'suppression', 'email', 'bounce', 'inbound_email', 'webhook_delivery', 'audit_event'];
    expect(Object.keys(last.counts)).toEqual(types);
    expect(last.counts).toEqual({ ...Object.fromEntries(types.map((t) => [t, 0])), ...seen });
    // A record of every kind; the types come in the documented order, each record once.
    for (const t of types) expect(seen[t], t).toBeGreaterThan(0);
    expect([...new Set(rest.map((l) => l.type))]).toEqual(types);
    for (const t of types) {
      const ids = recordsOf(rest, t).map((d) => d.id);
      expect(new Set(ids).size, t).toBe(ids.length);
    }
  });

  test('each record exactly as the API returns it, and every record the API lists', async () => {
    const lines = full.lines;
    expect(recordsOf(lines, 'project')).toEqual([env.tenant.project]);
    expect(byId(recordsOf(lines, 'api_key'))).toEqual(byId((await get('/api/v1/api-keys')).api_keys));
    expect(byId(recordsOf(lines, 'domain'))).toEqual(byId((await get('/api/v1/domains')).domains));
    expect(byId(recordsOf(lines, 'smtp_server'))).toEqual(byId((await get('/api/v1/smtp-servers')).smtp_servers));
    expect(byId(recordsOf(lines, 'webhook'))).toEqual(byId((await get('/api/v1/webhooks')).webhooks));
    expect(byId(recordsOf(lines, 'relay_node'))).toEqual(byId((await get('/api/v1/relay/nodes')).relay_nodes));
    expect(byId(recordsOf(lines, 'stylesheet'))).toEqual(byId((await get('/api/v1/stylesheets')).stylesheets));
    const templates = (await get('/api/v1/templates')).templates;
    expect(byId(recordsOf(lines, 'template'))).toEqual(byId(templates));
    const versions = [];
    for (const t of templates) {
      for (const v of (await get(`/api/v1/templates/${t.id}/versions`)).versions) {
        versions.push({ ...v, localizations: (await get(`/api/v1/templates/${t.id}/versions/${v.id}/localizations`)).localizations });
      }
    }
    expect(versions).toHaveLength(2);
    expect(versions.find((v) => v.active).localizations).toHaveLength(2);
    expect(byId(recordsOf(lines, 'template_version'))).toEqual(byId(versions));
    expect(byId(recordsOf(lines, 'suppression'))).toEqual(byId((await get('/api/v1/suppressions?include_expired=true&limit=200')).suppressions));
    expect(byId(recordsOf(lines, 'audit_event'))).toEqual(byId((await get('/api/v1/audit-log?limit=200')).events));

    // Emails: one line per recipient, each equal to its GET (content, attempts); the log lists the same set.
    const emails = recordsOf(lines, 'email');
    expect(emails.map((e) => e.id).sort()).toEqual((await get('/api/v1/emails?limit=200')).emails.map((e: { id: string }) => e.id).sort());
    expect(emails).toHaveLength(3);
    for (const e of emails) expect(e).toEqual((await get(`/api/v1/emails/${e.id}`)).email);
    const ann = emails.find((e) => e.id === delivered);
    expect(ann).toMatchObject({ status: 'sent', text: 'Hello', html: '<p>Hello</p>', headers: { 'X-Order': 'A-1' }, delivery_attempts: [{ attempt: 1, outcome: 'sent', smtp_code: 250, node_id: node.id }] });
    expect(emails.filter((e) => e.sandbox).map((e) => e.status)).toEqual(['captured']);

    const inbound = recordsOf(lines, 'inbound_email');
    expect(inbound.map((e) => e.id)).toEqual([inboundId]);
    expect(inbound).toEqual((await get('/api/v1/inbound-emails?limit=200')).inbound_emails);
    expect(inbound[0]).toEqual((await get(`/api/v1/inbound-emails/${inboundId}`)).inbound_email);

    const deliveries = recordsOf(lines, 'webhook_delivery');
    const [webhook] = (await get('/api/v1/webhooks')).webhooks;
    expect(byId(deliveries)).toEqual(byId((await get(`/api/v1/webhooks/${webhook.id}/deliveries?limit=200`)).deliveries));
    expect(deliveries.map((d) => d.event)).toEqual(expect.arrayContaining(['email.sent', 'inbound.received']));
    expect(deliveries.every((d) => d.attempt_log.length > 0)).toBe(true);

    const bounces = recordsOf(lines, 'bounce');
    expect(bounces).toEqual((await get('/api/v1/bounces?limit=200')).bounces);
    expect(bounces).toEqual([(await get(`/api/v1/bounces/${bounces[0].id}`)).bounce]);
    expect(bounces[0]).toMatchObject({ recipient: 'bob@example.org', type: 'hard', source: 'dsn', smtp_code: 550, status: '5.1.1', diagnostic: 'user unknown' });
  });

  test('no token, hash, secret, sealed value or private key anywhere in the bytes', () => {
    expect(secrets.length).toBeGreaterThan(20);
    for (const secret of secrets) expect(full.bytes.includes(secret), `leaked: ${secret.slice(0, 12)}…`).toBe(false);
    expect(full.bytes).not.toMatch(/PRIVATE KEY|whsec_|myk_[A-Za-z0-9]{8}_[A-Za-z0-9]|myr_[A-Za-z0-9]{8}_[A-Za-z0-9]|"v1\./);
  });

  test('nothing of another project; its own export holds only its own records', async () => {
    for (const id of otherIds) expect(full.bytes.includes(id), id).toBe(false);
    const theirs = await exportWith((await env.other.key(['data:read'])).token);
    expect(theirs.status).toBe(200);
    for (const id of tenantIds) expect(theirs.bytes.includes(id), id).toBe(false);
    const records = theirs.lines.filter((l) => 'data' in l);
    expect(records.filter((l) => l.type !== 'project').every((l) => l.data.project_id === env.other.project.id || l.type === 'webhook_delivery')).toBe(true);
    expect(recordsOf(theirs.lines, 'email')).toHaveLength(1);
  });

  test('a key without data:read is refused (no access to data); * passes; a session needs a role holding it', async () => {
    const refused = await exportWith(env.keys.reader);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.bytes)).toEqual({ error: 'no access to data in this project' });
    const none = await exportWith((await env.tenant.key([])).token);
    expect(none.status).toBe(403);
    expect(JSON.parse(none.bytes)).toEqual({ error: 'no access to data in this project' });
    expect((await exportWith(env.keys.all)).lines.at(-1)?.type).toBe('end');
    const asPlatform = await exportWith(env.admin, { 'X-Service-Project-Id': env.tenant.project.id });
    expect(asPlatform.status).toBe(200);
    expect(asPlatform.lines[0]).toMatchObject({ type: 'export', project_id: env.tenant.project.id });
    // Another project named in the header: refused, as on every route.
    expect((await exportWith(env.keys.backup, { 'X-Service-Project-Id': env.other.project.id })).status).toBe(403);

    // A plain member holds no data:read; the owner does.
    const member = await env.stack.call('POST', '/api/v1/admin/users', { token: env.admin, body: { email: `member-${crypto.randomUUID().slice(0, 8)}@example.com` } });
    await env.stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'member')`, [env.tenant.project.id, member.body.user.id]);
    const asMember = await exportWith('', { cookie: await sessionCookie(env.stack, member.body.user.id), 'X-Service-Project-Id': env.tenant.project.id });
    expect(asMember.status).toBe(403);
    const asOwner = await exportWith('', { cookie: await sessionCookie(env.stack, env.tenant.user.id), 'X-Service-Project-Id': env.tenant.project.id });
    expect(asOwner.status).toBe(200);
    expect(asOwner.lines.at(-1)?.type).toBe('end');
  });
});

describe('a large project', () => {
  const EMAILS = 3_000;
  const INBOUND = 24;
  let bulk: SeededProject;
  let token: string;
  let tied: number;

  beforeAll(async () => {
    bulk = await seedProject(env.stack, env.admin, 'bulk');
    token = (await bulk.key(['data:read'])).token;
    // One message, EMAILS recipients, one a second newest first, except that the four around each
    // 500th (the page size) share one instant with microseconds: each such group straddles a page boundary.
    await env.stack.sql.query(
      `WITH m AS (INSERT INTO outbound_messages (project_id, message_id, "from", "to", subject, text)
                  VALUES ($1, '<bulk@bulk.test>', 'news@bulk.test', ARRAY['r@example.org'], 'Bulk', 'hello') RETURNING id)
       INSERT INTO emails (project_id, message_id, recipient, kind, status, created_at)
       SELECT $1, m.id, 'r' || n || '@example.org', 'to', 'queued',
              CASE WHEN n > 2 AND (n + 2) % 500 < 4
                   THEN timestamptz '2026-03-01T10:00:00Z' - ((n + 2) / 500 * 500) * interval '1 second' + interval '0.123456 second'
                   ELSE timestamptz '2026-03-01T10:00:00Z' - n * interval '1 second' END
       FROM m, generate_series(1, $2::int) AS n`, [bulk.project.id, EMAILS]);
    tied = Number((await env.stack.sql.query(`SELECT count(*) FROM emails WHERE project_id = $1 AND extract(microseconds from created_at)::int % 1000000 = 123456`, [bulk.project.id])).rows[0].count);
    expect(tied).toBe(23);
    // INBOUND messages of 1 MiB of text each: several pages' body budget (4 MiB), and far more than the
    // sockets between the Worker and this test buffer (a few MiB), so the export cannot have read ahead to its end
    // by the time the first bytes are here.
    await env.stack.sql.query(
      `INSERT INTO inbound_emails (project_id, spool_id, sender, recipients, text_body, auth, size, status, received_at)
       SELECT $1, 'bulk-' || n, 'ann@example.org', ARRAY['in@bulk.test'], repeat('x', 1048576), '{"spf":"pass","dkim":"pass","dmarc":"pass","aligned":true,"client_ip":"203.0.113.9"}'::jsonb,
              1048576, 'received', now() - n * interval '1 second'
       FROM generate_series(1, $2::int) AS n`, [bulk.project.id, INBOUND]);
  }, 60_000);

  /** Starts the bulk project's export and reads its first bytes: the header line. */
  async function startExport() {
    const res = await fetch(`${env.stack.url}/api/v1/data/export`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const first = await reader.read();
    let text = decoder.decode(first.value, { stream: true });
    expect(text.startsWith('{"type":"export"')).toBe(true);
    return {
      /** Reads on to the end; `failed` when the connection broke off instead. */
      async rest(): Promise<{ text: string; failed: boolean }> {
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return { text, failed: false };
            text += decoder.decode(value, { stream: true });
          }
        } catch {
          return { text, failed: true };
        }
      },
    };
  }

  test('thousands of emails and large inbound bodies stream whole, page after page, each record once', async () => {
    const started = Date.now();
    const exporting = await startExport();
    // Pages are read one after the other as the export goes, not as one snapshot taken at its start: an audit
    // event written now, older than any other, falls in the last page and is there (docs/data-export.md, "Consistency").
    const { rows: [late] } = await env.stack.sql.query(
      `INSERT INTO audit_events (category, type, project_id, method, path, status, created_at)
       VALUES ('project', 'test.late', $1, 'POST', '/late', 200, '2000-01-01T00:00:00Z') RETURNING id`, [bulk.project.id]);
    const { text, failed } = await exporting.rest();
    expect(failed).toBe(false);
    const ms = Date.now() - started;
    const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as Line);
    const exported = { bytes: text, lines };
    const end = exported.lines.at(-1)!;
    expect(end.type).toBe('end');
    const emails = recordsOf(exported.lines, 'email');
    expect(emails).toHaveLength(EMAILS);
    expect(new Set(emails.map((e) => e.id)).size).toBe(EMAILS);
    const { rows } = await env.stack.sql.query('SELECT id FROM emails WHERE project_id = $1 ORDER BY created_at DESC, id DESC', [bulk.project.id]);
    expect(emails.map((e) => e.id)).toEqual(rows.map((r) => r.id));
    expect(emails.filter((e) => e.created_at.endsWith('.123456Z'))).toHaveLength(tied);
    const inbound = recordsOf(exported.lines, 'inbound_email');
    expect(inbound).toHaveLength(INBOUND);
    expect(inbound.every((e) => e.text_body.length === 1048576)).toBe(true);
    expect(recordsOf(exported.lines, 'audit_event').map((e) => e.id)).toContain(late.id);
    expect(end.counts).toMatchObject({ project: 1, api_key: 1, email: EMAILS, inbound_email: INBOUND });
    console.log(`export of ${EMAILS} emails and ${INBOUND} MiB of inbound bodies: ${(exported.bytes.length / 1024 / 1024).toFixed(1)} MiB in ${ms} ms`);
  }, 120_000);

  test('a failure part way ends the body with an error line, never the end line', async () => {
    const exporting = await startExport();
    // The last type's table gone while the export is under way (well before it: the bulk project's 24 MiB
    // of inbound mail lie between): its page's query fails.
    await env.stack.sql.query('ALTER TABLE audit_events RENAME TO audit_events_away');
    try {
      const { text } = await exporting.rest();
      const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as Line);
      expect(lines.length).toBeGreaterThan(EMAILS + INBOUND);
      expect(lines.at(-1)).toEqual({ type: 'error', error: 'export failed part way: start it again' });
      expect(lines.some((l) => l.type === 'end')).toBe(false);
      expect(recordsOf(lines, 'inbound_email')).toHaveLength(INBOUND);
      // The log says which export failed and why, by the query's text: never its parameters.
      const logged = await eventually(async () => env.stack.logs().filter((l) => l.message.startsWith(`data export of project ${bulk.project.id} failed part way`)), (l) => l.length === 1);
      expect(logged[0]!.message).toContain('relation "audit_events" does not exist');
      expect(logged[0]!.message).not.toMatch(/params|"project"/);
    } finally {
      await env.stack.sql.query('ALTER TABLE audit_events_away RENAME TO audit_events');
    }
  });
});
