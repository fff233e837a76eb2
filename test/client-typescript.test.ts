// The TypeScript client (clients/typescript, issue 28) against the real stack:
// keys, sends with and without an Idempotency-Key (a send whose answer was lost
// is retried and sends once), inbound paging across cursors, webhook signatures
// our dispatcher made, the error classes provoked for real, streamed downloads.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  AuthenticationError, BadRequestError, ConflictError, ConnectionError, Edgemail, EdgemailAdmin, EdgemailError, NotFoundError,
  PayloadTooLargeError, PermissionDeniedError, UnprocessableEntityError, ValidationError, VERSION, verifyWebhook, WebhookVerificationError,
} from '../clients/typescript/src/index.js';
import { enroll, forward, inboundMeta, registerDomain } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const DOMAIN = 'client-acme.test';
const env = useTenantStack({
  settings: { SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SERVICE_SERVER_MAX_BODY_BYTES: '65536' },
  keys: { all: ['*'], reader: ['inbound:read'] },
});

interface Sent { method: string; url: string; headers: Headers }
/** A fetch that passes every request to the real one and keeps what was sent; `dropAnswers` loses that many answers after the server got the request. */
function recordingFetch(dropAnswers = 0) {
  const sent: Sent[] = [];
  let drops = dropAnswers;
  const f: typeof fetch = async (input, init) => {
    sent.push({ method: init?.method ?? 'GET', url: String(input), headers: new Headers(init?.headers) });
    const response = await fetch(input, init);
    if (drops > 0) {
      drops--;
      await response.arrayBuffer();
      throw new TypeError('fetch failed: the connection was reset');
    }
    return response;
  };
  return { fetch: f, sent };
}

const client = (apiKey = env.keys.all, extra: Partial<ConstructorParameters<typeof Edgemail>[0]> = {}) =>
  new Edgemail({ apiKey, baseUrl: env.stack.url, ...extra });

/** The error a call rejects with. */
async function refusal(call: Promise<unknown>): Promise<EdgemailError> {
  try {
    await call;
  } catch (e) {
    if (e instanceof EdgemailError) return e;
    throw e;
  }
  throw new Error('the call succeeded');
}

let receiver: WebhookReceiver;
let node: { token: string };
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  await registerDomain(env.stack, env.tenant.project.id, DOMAIN);
  const { domain } = await client().domains.create({ name: 'send.client-acme.test' });
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domain.id]);
  node = await enroll(env.stack, env.keys.all);
});
afterAll(async () => { await receiver?.close(); });

describe('keys', () => {
  test('create, list and revoke through the client; the new key works until revoked; every request names the client', async () => {
    const recorded = recordingFetch();
    const mail = client(env.keys.all, { fetch: recorded.fetch });
    const { api_key, token } = await mail.apiKeys.create({ name: 'from-the-client', permissions: ['domains:read'] });
    expect(token).toMatch(/^myk_/);
    expect((await mail.apiKeys.list()).api_keys.map((k) => k.id)).toContain(api_key.id);
    const fresh = client(token);
    expect((await fresh.domains.list()).domains.map((d) => d.name)).toContain('send.client-acme.test');
    await mail.apiKeys.revoke(api_key.id);
    const refused = await refusal(fresh.domains.list());
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect(refused.status).toBe(401);
    for (const r of recorded.sent) {
      expect(r.headers.get('user-agent')).toBe(`edgemail-typescript/${VERSION}`);
      expect(r.headers.get('authorization')).toBe(`Bearer ${env.keys.all}`);
    }
  });

  test('the admin client takes the platform credential; a project key is refused there', async () => {
    const admin = new EdgemailAdmin({ apiKey: env.admin, baseUrl: env.stack.url });
    const { user } = await admin.users.create({ email: `ops-${crypto.randomUUID().slice(0, 8)}@example.com` });
    expect((await admin.users.list()).users.map((u) => u.id)).toContain(user.id);
    const refused = await refusal(new EdgemailAdmin({ apiKey: env.keys.all, baseUrl: env.stack.url }).users.list());
    expect([401, 403]).toContain(refused.status);
  });
});

describe('sending', () => {
  const message = (subject: string) => ({ from: 'news@send.client-acme.test', to: ['ann@example.org'], subject, text: 'hello' });
  const rowsWithSubject = async (subject: string) =>
    Number((await env.stack.sql.query('SELECT count(*) FROM outbound_messages WHERE project_id = $1 AND subject = $2', [env.tenant.project.id, subject])).rows[0].count);

  test('without a key the client adds an Idempotency-Key; with one it sends it, and the same key answers the first send again', async () => {
    const recorded = recordingFetch();
    const mail = client(env.keys.all, { fetch: recorded.fetch });
    const first = await mail.emails.send(message('auto key'));
    expect(first.emails).toHaveLength(1);
    expect(recorded.sent[0]!.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);

    const idempotencyKey = `order-${crypto.randomUUID()}`;
    const a = await mail.emails.send(message('given key'), { idempotencyKey });
    const b = await mail.emails.send(message('given key'), { idempotencyKey });
    expect(recorded.sent[1]!.headers.get('idempotency-key')).toBe(idempotencyKey);
    expect(b.emails.map((e) => e.id)).toEqual(a.emails.map((e) => e.id));
    expect(await rowsWithSubject('given key')).toBe(1);

    const conflict = await refusal(mail.emails.send(message('another body'), { idempotencyKey }));
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict.status).toBe(409);
    expect(await rowsWithSubject('another body')).toBe(0);
  });

  test('a send whose answer is lost is retried with the same key and sends once; a POST without a key is not retried', async () => {
    const dropping = recordingFetch(1);
    const sent = await client(env.keys.all, { fetch: dropping.fetch }).emails.send(message('lost answer'));
    expect(dropping.sent).toHaveLength(2);
    expect(dropping.sent[1]!.headers.get('idempotency-key')).toBe(dropping.sent[0]!.headers.get('idempotency-key'));
    expect(sent.emails).toHaveLength(1);
    expect(await rowsWithSubject('lost answer')).toBe(1);

    const once = recordingFetch(1);
    const refused = await refusal(client(env.keys.all, { fetch: once.fetch }).apiKeys.create({ name: 'not retried' }));
    expect(refused).toBeInstanceOf(ConnectionError);
    expect(once.sent).toHaveLength(1);
  });
});

describe('paging', () => {
  test('130 inbound records: for-await follows the cursors through every one, newest first; pages() gives them 50 at a time', async () => {
    const project = await env.tenant; // the tenant's own project, seeded alongside other tests' rows
    await env.stack.sql.query(
      `INSERT INTO inbound_emails (project_id, spool_id, sender, recipients, subject, auth, size, status, received_at)
       SELECT $1, gen_random_uuid()::text, 'ann@example.org', ARRAY['support@${DOMAIN}'], 'paged ' || n,
              '{"spf":"pass","dkim":"pass","dmarc":"pass","aligned":true,"client_ip":"203.0.113.9"}'::jsonb, 10, 'received',
              '2026-11-26T02:00:00Z'::timestamptz + (n % 7) * interval '1 second'
       FROM generate_series(1, 130) AS n`,
      [project.project.id],
    );
    const { rows } = await env.stack.sql.query(
      `SELECT id FROM inbound_emails WHERE project_id = $1 AND status = 'received' ORDER BY received_at DESC, id DESC`, [project.project.id]);
    const expected = rows.map((r) => r.id as string);
    expect(expected.length).toBeGreaterThanOrEqual(130);

    const mail = client(env.keys.reader);
    const seen: string[] = [];
    for await (const message of mail.inboundEmails.list({ status: 'received' })) seen.push(message.id);
    expect(seen).toEqual(expected);

    const pages: number[] = [];
    for await (const page of mail.inboundEmails.list({ status: 'received', limit: 50 }).pages()) pages.push(page.inbound_emails.length);
    expect(pages).toEqual([50, 50, expected.length - 100]);
    const first = await mail.inboundEmails.list({ limit: 5 }).firstPage();
    expect(first.inbound_emails).toHaveLength(5);
    expect(first.next).not.toBeNull();
  });

  test('the audit log pages by offset to the same events as one large page', async () => {
    const mail = client();
    const all = (await mail.auditLog.list({ limit: 200 }).firstPage()).events.map((e) => e.id);
    expect(all.length).toBeGreaterThan(3);
    const walked: string[] = [];
    for await (const event of mail.auditLog.list({ limit: 2 })) walked.push(event.id);
    expect(walked).toEqual(all);
  });
});

describe('webhooks', () => {
  test('create, rotate: the dispatcher\'s signature verifies under the new secret only; a changed body or a stale timestamp does not', async () => {
    const mail = client();
    const { webhook } = await mail.webhooks.create({ url: `${receiver.url}/hooks`, events: ['inbound.received'] });
    const rotated = (await mail.webhooks.rotateSecret(webhook.id)).webhook;
    expect(rotated.secret).not.toBe(webhook.secret);

    const meta = inboundMeta([`support@${DOMAIN}`]);
    const arrived = await forward(env.stack, node.token, { meta, raw: 'From: ann@example.org\r\nSubject: Hello\r\n\r\nHi\r\n' });
    expect(arrived.status).toBe(200);
    const [req] = await eventually(async () => receiver.received(), (r) => r.length >= 1, 10_000);

    const event = await verifyWebhook<{ event: string; data: { id: string } }>({ payload: req!.raw, headers: req!.headers, secret: rotated.secret! });
    expect(event.event).toBe('inbound.received');
    expect(event.data.id).toBe(arrived.body.inbound_emails[0].id);
    await expect(verifyWebhook({ payload: new Uint8Array(req!.raw), headers: req!.headers, secret: rotated.secret!, toleranceSeconds: 300 })).resolves.toBeTruthy();

    const fails = (input: Partial<Parameters<typeof verifyWebhook>[0]>) =>
      expect(verifyWebhook({ payload: req!.raw, headers: req!.headers, secret: rotated.secret!, ...input })).rejects.toBeInstanceOf(WebhookVerificationError);
    await fails({ secret: webhook.secret! });
    await fails({ payload: JSON.stringify(req!.body, null, 1) });
    await fails({ now: Number(req!.headers['x-service-timestamp']) + 301 });
    await fails({ headers: { ...req!.headers, 'x-service-signature': 'sha256=00' } });
  });
});

describe('downloads', () => {
  test('a 3 MB raw message streams in chunks, byte for byte', async () => {
    const line = `${'x'.repeat(76)}\r\n`;
    const raw = `From: ann@example.org\r\nSubject: Big\r\n\r\n${line.repeat(Math.ceil(3_000_000 / line.length))}`;
    const arrived = await forward(env.stack, node.token, { meta: inboundMeta([`support@${DOMAIN}`]), raw });
    expect(arrived.status, JSON.stringify(arrived.body)).toBe(200);
    const stream = await client(env.keys.reader).inboundEmails.getRaw(arrived.body.inbound_emails[0].id);
    expect(stream).toBeInstanceOf(ReadableStream);
    const hash = createHash('sha256');
    let bytes = 0;
    let chunks = 0;
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      bytes += chunk.byteLength;
      chunks++;
    }
    expect(bytes).toBe(Buffer.byteLength(raw));
    expect(chunks).toBeGreaterThan(1);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(raw).digest('hex'));
  });

  test('the data export reads as NDJSON values, one per line', async () => {
    const lines: { type?: string }[] = [];
    for await (const line of client().dataExport.get()) lines.push(line as { type?: string });
    expect(lines.length).toBeGreaterThan(2);
    expect(lines[0]).toMatchObject({ type: 'export', version: 1, project_id: env.tenant.project.id });
    expect(lines[lines.length - 1]).toMatchObject({ type: 'end' });
  });
});

describe('errors', () => {
  test('400 carries the field errors; ValidationError is the same class', async () => {
    const e = await refusal(client().emails.send({ from: 'news@send.client-acme.test', to: ['not an address'], subject: 's', text: 't' }));
    expect(e).toBeInstanceOf(BadRequestError);
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.status).toBe(400);
    expect(Object.keys(e.fields).length).toBeGreaterThan(0);
    expect(e.message).toMatch(/invalid/);
  });

  test('401 for an unknown key', async () => {
    const e = await refusal(client('myk_nothing_like_a_real_key').domains.list());
    expect(e).toBeInstanceOf(AuthenticationError);
    expect(e.status).toBe(401);
  });

  test('403 names the permission the key lacks, where the API does', async () => {
    const none = await refusal(client(env.keys.reader).webhooks.list());
    expect(none).toBeInstanceOf(PermissionDeniedError);
    expect(none.status).toBe(403);
    expect(none.message).toBe('no access to webhooks in this project');
    const { token } = await env.tenant.key(['webhooks:read']);
    const e = await refusal(client(token).webhooks.create({ url: `${receiver.url}/x`, events: ['*'] }));
    expect(e).toBeInstanceOf(PermissionDeniedError);
    expect((e as PermissionDeniedError).requiredPermission, e.message).toBe('webhooks:write');
  });

  test('404 for a record that is not there', async () => {
    const e = await refusal(client(env.keys.reader).inboundEmails.get(crypto.randomUUID()));
    expect(e).toBeInstanceOf(NotFoundError);
    expect(e.status).toBe(404);
  });

  test('413 for a body over server.max_body_bytes', async () => {
    const e = await refusal(client().apiKeys.create({ name: 'x'.repeat(70_000) }));
    expect(e).toBeInstanceOf(PayloadTooLargeError);
    expect(e.status).toBe(413);
  });

  test('422 for a template version that cannot render', async () => {
    const mail = client();
    const { template } = await mail.templates.create({ name: `bare-${crypto.randomUUID().slice(0, 8)}` });
    const { version } = await mail.templates.createVersion(template.id, {});
    const e = await refusal(mail.templates.preview(template.id, version.id, {}));
    expect(e).toBeInstanceOf(UnprocessableEntityError);
    expect(e.status).toBe(422);
    expect(e.message).toMatch(/has no localizations/);
  });
});
