// The webhook routes of the machine API (spec "Webhook", "Webhooks",
// "Webhook events"): create (secret shown once, sealed not hashed), list,
// delete, rotate-secret, the delivery log with keyset paging, redeliver.
// Deliveries and attempts are seeded directly in SQL; the stack allows
// private targets so that webhooks can point at a receiver on 127.0.0.1.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { verifyWebhook } from '@edgemail/shared';
import { unseal } from '../edge/src/crypto/seal.js';
import { seedProject } from './support/stack.js';
import { useTenantStack } from './support/tenant-stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';
import { startDohResponder, type DohResponder } from './support/doh-responder.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { eventually } from './support/wait.js';

const env = useTenantStack({
  settings: { SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  keys: {
    writer: ['webhooks:write'], reader: ['webhooks:read'], deleter: ['webhooks:delete'],
    all: ['webhooks:read', 'webhooks:write', 'webhooks:delete'],
  },
});

let receiver: WebhookReceiver;
beforeAll(async () => { receiver = await startWebhookReceiver(); });
afterAll(async () => { await receiver?.close(); });

const SECRET = /^whsec_[A-Za-z0-9_-]{43}$/;
// ordered, status and the failure span since webhooks II (docs/webhooks.md).
const RECORD_KEYS = [
  'consecutive_failures', 'created_at', 'disabled_at', 'disabled_reason', 'events', 'failing_since', 'filters', 'id',
  'ordered', 'project_id', 'secret_rotated_at', 'status', 'url',
];
const DELIVERY_KEYS = [
  'attempt_log', 'attempts', 'completed_at', 'created_at', 'data', 'event', 'event_at', 'id', 'last_error',
  'last_status_code', 'next_attempt_at', 'redelivery_of', 'replay_id', 'status', 'webhook_id',
];

const create = (body: unknown, token = env.keys.writer) => env.stack.call('POST', '/api/v1/webhooks', { token, body });
const hookUrl = (path = 'hook') => `${receiver.url}/${path}`;
const count = async (table: string) => Number((await env.stack.sql.query(`SELECT count(*) FROM ${table}`)).rows[0].count);
const sealedOf = async (id: string) => (await env.stack.sql.query('SELECT secret_sealed FROM webhooks WHERE id = $1', [id])).rows[0]?.secret_sealed as string | undefined;
const webhookRow = async (id: string) => (await env.stack.sql.query('SELECT * FROM webhooks WHERE id = $1', [id])).rows[0];
const deliveryRows = async (webhookId: string) =>
  (await env.stack.sql.query('SELECT * FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at, id', [webhookId])).rows;

/** A webhook of `token`'s project, pointing at the receiver. */
async function newWebhook(token = env.keys.writer, body: Record<string, unknown> = {}) {
  const r = await create({ url: hookUrl(), events: ['email.sent'], ...body }, token);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.webhook as { id: string; project_id: string; secret: string };
}

interface DeliverySeed {
  status?: 'pending' | 'succeeded' | 'failed';
  createdAt?: string;
  attempts?: number;
  nextAttemptAt?: string | null;
  event?: string;
  data?: Record<string, unknown>;
}

/** Inserts `n` deliveries of a webhook in one statement; returns their ids in insertion order. */
async function seedDeliveries(webhookId: string, projectId: string, n: number, seed: DeliverySeed = {}): Promise<string[]> {
  const { rows } = await env.stack.sql.query(
    `INSERT INTO webhook_deliveries (webhook_id, project_id, event, event_at, data, status, attempts, next_attempt_at,
                                     last_status_code, last_error, created_at, completed_at)
     SELECT $1, $2, $3, '2026-11-26T01:00:00.123Z', jsonb_build_object('id', gen_random_uuid(), 'n', n) || $4::jsonb,
            $5::webhook_delivery_status, $6, $7::timestamptz,
            CASE WHEN $5 = 'succeeded' THEN 200 WHEN $5 = 'failed' THEN 500 END,
            CASE WHEN $5 = 'failed' THEN 'receiver answered 500' END,
            $8::timestamptz, CASE WHEN $5 = 'pending' THEN NULL ELSE $8::timestamptz END
     FROM generate_series(1, $9::int) AS n
     ORDER BY n
     RETURNING id`,
    [
      webhookId, projectId, seed.event ?? 'email.sent', JSON.stringify(seed.data ?? {}), seed.status ?? 'succeeded',
      seed.attempts ?? 1, seed.nextAttemptAt ?? null, seed.createdAt ?? new Date().toISOString(), n,
    ],
  );
  return rows.map((r) => r.id as string);
}

async function seedAttempt(deliveryId: string, attempt: number, statusCode: number | null, error: string | null) {
  await env.stack.sql.query(
    `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_excerpt)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [deliveryId, attempt, `2026-11-26T01:0${attempt}:00.000Z`, 100 + attempt, statusCode, error, statusCode ? `answer ${attempt}` : ''],
  );
}

describe('POST /api/v1/webhooks', () => {
  test('201 {webhook} with the secret: events and filters normalized, filters default to []', async () => {
    const before = await count('webhooks');
    const r = await create({
      url: hookUrl('a'),
      events: ['email.sent', 'inbound.received', 'email.sent'],
      filters: ['Ann <Ann@Example.ORG>', '*@Example.COM.', 'ann@example.org'],
    });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['webhook']);
    expect(Object.keys(r.body.webhook).sort()).toEqual([...RECORD_KEYS, 'secret'].sort());
    expect(r.body.webhook).toEqual({
      id: expect.any(String), project_id: env.tenant.project.id, url: hookUrl('a'),
      events: ['email.sent', 'inbound.received'], filters: ['ann@example.org', '*@example.com'],
      created_at: expect.any(String), secret_rotated_at: null, secret: expect.stringMatching(SECRET),
      ordered: false, status: 'enabled', disabled_at: null, disabled_reason: null, failing_since: null, consecutive_failures: 0,
    });
    expect(await count('webhooks')).toBe(before + 1);
    const row = await webhookRow(r.body.webhook.id);
    expect(row).toMatchObject({ project_id: env.tenant.project.id, url: hookUrl('a'), events: ['email.sent', 'inbound.received'], filters: ['ann@example.org', '*@example.com'], secret_rotated_at: null });
    expect(row.created_at.toISOString()).toBe(r.body.webhook.created_at);

    const all = await create({ url: hookUrl('b'), events: ['*', '*'] });
    expect(all.status).toBe(201);
    expect(all.body.webhook).toMatchObject({ events: ['*'], filters: [] });
    expect(all.body.webhook.secret).not.toBe(r.body.webhook.secret);
  });

  test('the secret is stored sealed under the encryption key: not as text, not as its sha256, in no row of any table', async () => {
    const webhook = await newWebhook();
    const sealed = await sealedOf(webhook.id);
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain(webhook.secret);
    const hash = createHash('sha256').update(webhook.secret).digest('hex');
    expect(sealed).not.toContain(hash);
    expect(sealed).not.toContain(createHash('sha256').update(webhook.secret).digest('base64'));
    // Sealed, not hashed: it opens to the secret, and only in its own context.
    expect(await unseal(sealed!, env.stack.encryptionKey, 'webhooks.secret')).toBe(webhook.secret);
    await expect(unseal(sealed!, env.stack.encryptionKey, 'certificates.private_key')).rejects.toThrow();

    const rotated = (await env.stack.call('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, { token: env.keys.writer })).body.webhook.secret as string;
    await settledAuditEvents(env.stack, env.admin); // every audit row of these requests is written
    const { rows: tables } = await env.stack.sql.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['audit_events', 'webhooks']));
    const secrets = [webhook.secret, rotated, webhook.secret.slice('whsec_'.length), rotated.slice('whsec_'.length), hash];
    let searched = 0;
    for (const { table_name: table } of tables) {
      const { rows } = await env.stack.sql.query(`SELECT row_to_json(t)::text AS row FROM ${JSON.stringify(table)} t`);
      searched += rows.length;
      for (const secret of secrets) expect(rows.filter((r) => r.row.includes(secret)), `${table} rows holding a secret`).toEqual([]);
    }
    expect(searched).toBeGreaterThan(0);
  });

  test.each([
    ['url missing', { events: ['email.sent'] }, 'url', 'required'],
    ['url not a string', { url: 42, events: ['email.sent'] }, 'url', 'must be a string'],
    ['url of scheme ftp', { url: 'ftp://example.org/hook', events: ['email.sent'] }, 'url', 'must be an http or https URL'],
    ['url not a URL', { url: 'hooks.example.org/x', events: ['email.sent'] }, 'url', 'must be an http or https URL'],
    ['url of 2049 characters', { url: `https://example.org/${'a'.repeat(2049 - 20)}`, events: ['email.sent'] }, 'url', 'must be at most 2048 characters'],
    ['url with credentials', { url: 'https://user:pw@example.org/hook', events: ['email.sent'] }, 'url', 'must not contain a user name or password'],
    ['events missing', { url: 'https://example.org/hook' }, 'events', 'required'],
    ['events a string', { url: 'https://example.org/hook', events: 'email.sent' }, 'events', 'must be an array of event types'],
    ['events empty', { url: 'https://example.org/hook', events: [] }, 'events', 'must name at least one event type, or *'],
    ['11 events', { url: 'https://example.org/hook', events: Array(11).fill('email.sent') }, 'events', 'must name at most 10 event types'],
    ['an unknown event type', { url: 'https://example.org/hook', events: ['email.sent', 'email.teleported'] }, 'events', 'unknown event type email.teleported'],
    ['* with other types', { url: 'https://example.org/hook', events: ['*', 'email.sent'] }, 'events', 'wildcard * must be the only entry'],
    ['21 filters', { url: 'https://example.org/hook', events: ['*'], filters: Array.from({ length: 21 }, (_, i) => `u${i}@example.org`) }, 'filters', 'must hold at most 20 filters'],
    ['filter *@', { url: 'https://example.org/hook', events: ['*'], filters: ['*@'] }, 'filters.0', 'domain must not be empty'],
    ['filter *@ a bad domain', { url: 'https://example.org/hook', events: ['*'], filters: ['*@localhost'] }, 'filters.0', 'domain must have at least two labels (example.com)'],
    ['filter foo@', { url: 'https://example.org/hook', events: ['*'], filters: ['foo@'] }, 'filters.0', 'must be an email address (local@domain), or *@<domain>'],
    ['filter not an address', { url: 'https://example.org/hook', events: ['*'], filters: ['ann@example.org', 'not an address'] }, 'filters.1', 'must be an email address, or *@<domain>'],
    ['filters a string', { url: 'https://example.org/hook', events: ['*'], filters: 'ann@example.org' }, 'filters', 'must be an array of sender filters'],
    ['an unknown field', { url: 'https://example.org/hook', events: ['*'], secret: 'whsec_mine' }, 'json', 'Unrecognized key: "secret"'],
  ])('%s: 400 naming the field, nothing created', async (_case, body, field, problem) => {
    const before = await count('webhooks');
    const r = await create(body);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid request body: ${field}: ${problem}`, fields: { [field]: problem } });
    expect(await count('webhooks')).toBe(before);
  });

  test('a body that is not JSON is 400, nothing created', async () => {
    const before = await count('webhooks');
    const r = await env.stack.call('POST', '/api/v1/webhooks', { token: env.keys.writer, rawBody: '{"url":' });
    expect(r).toMatchObject({ status: 400, body: { error: 'malformed JSON body' } });
    expect(await count('webhooks')).toBe(before);
  });
});

describe('POST /api/v1/webhooks without webhook.allow_private_targets', () => {
  let doh: DohResponder;
  const settings: Record<string, string> = {};
  beforeAll(async () => {
    doh = await startDohResponder();
    settings.SERVICE_DNS_DOH_URL = doh.url;
  });
  afterAll(async () => { await doh?.close(); });
  const strict = useTenantStack({ settings, keys: { writer: ['webhooks:write'] } });
  const createStrict = (url: string) => strict.stack.call('POST', '/api/v1/webhooks', { token: strict.keys.writer, body: { url, events: ['email.sent'] } });
  const strictCount = async () => Number((await strict.stack.sql.query('SELECT count(*) FROM webhooks')).rows[0].count);

  test.each([
    ['http://127.0.0.1/', 'host 127.0.0.1 is a private address (loopback)'],
    ['http://10.0.0.1/hook', 'host 10.0.0.1 is a private address (private)'],
    ['http://localhost:8080/hook', 'host localhost is a loopback name'],
  ])('%s: 400 naming url before any lookup, nothing created', async (url, problem) => {
    const before = await strictCount();
    doh.clear();
    const r = await createStrict(url);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid request body: url: ${problem}`, fields: { url: problem } });
    expect(doh.queries()).toEqual([]);
    expect(await strictCount()).toBe(before);
  });

  test('a host resolving to private space: 400 naming url, nothing created', async () => {
    doh.set('inside.test.example', 'A', ['10.1.2.3']);
    const before = await strictCount();
    const r = await createStrict('https://inside.test.example/hook');
    const problem = 'inside.test.example resolves to 10.1.2.3, a private address (private)';
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid request body: url: ${problem}`, fields: { url: problem } });
    expect(await strictCount()).toBe(before);
  });

  test('a resolver that cannot answer: 503 could not check url, nothing created', async () => {
    doh.set('flaky.test.example', 'A', ['93.184.215.14']);
    doh.failNext(2, 'http-500');
    const before = await strictCount();
    const r = await createStrict('https://flaky.test.example/hook');
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ error: 'could not check url: could not resolve flaky.test.example: resolver answered http 500' });
    expect(await strictCount()).toBe(before);
  });

  test('a host resolving to public space only: 201, after asking the resolver', async () => {
    doh.clear();
    doh.set('hooks.test.example', 'A', ['93.184.215.14']);
    const r = await createStrict('https://hooks.test.example/hook');
    expect(r.status).toBe(201);
    expect(r.body.webhook.url).toBe('https://hooks.test.example/hook');
    expect(doh.queries().map((q) => q.name)).toContain('hooks.test.example');
  });
});

describe('GET /api/v1/webhooks', () => {
  test('the project\'s webhooks, newest first, never a secret', async () => {
    const project = await seedProject(env.stack, env.admin, 'listing');
    const token = (await project.key(['webhooks:read', 'webhooks:write'])).token;
    const made = [];
    for (const path of ['one', 'two', 'three']) made.push(await newWebhook(token, { url: hookUrl(path) }));
    await newWebhook((await env.other.key(['webhooks:write'])).token); // another project's

    const r = await env.stack.call('GET', '/api/v1/webhooks', { token });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['webhooks']);
    expect(r.body.webhooks.map((w: { id: string }) => w.id)).toEqual(made.map((w) => w.id).reverse());
    for (const w of r.body.webhooks) expect(Object.keys(w).sort()).toEqual(RECORD_KEYS);
    const text = JSON.stringify(r.body);
    for (const w of made) expect(text).not.toContain(w.secret.slice('whsec_'.length));
    const { secret: _secret, ...record } = made[0]!;
    expect(r.body.webhooks.at(-1)).toEqual(record);
  });
});

describe('POST /api/v1/webhooks/{id}/rotate-secret', () => {
  test('200 {webhook} with a fresh secret; the sealed value is replaced and secret_rotated_at set', async () => {
    const webhook = await newWebhook();
    const sealedBefore = await sealedOf(webhook.id);
    const r = await env.stack.call('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, { token: env.keys.writer });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['webhook']);
    const { secret, secret_rotated_at: rotatedAt, ...rest } = r.body.webhook;
    const { secret: oldSecret, secret_rotated_at: neverRotated, ...original } = webhook as typeof webhook & { secret_rotated_at: string | null };
    expect(neverRotated).toBeNull();
    expect(rest).toEqual(original);
    expect(secret).toMatch(SECRET);
    expect(secret).not.toBe(oldSecret);
    expect(Date.parse(rotatedAt)).toBeGreaterThan(Date.now() - 60_000);

    const sealedAfter = await sealedOf(webhook.id);
    expect(sealedAfter).not.toBe(sealedBefore);
    expect(await unseal(sealedAfter!, env.stack.encryptionKey, 'webhooks.secret')).toBe(secret);
    expect((await webhookRow(webhook.id)).secret_rotated_at.toISOString()).toBe(rotatedAt);

    const again = await env.stack.call('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, { token: env.keys.writer });
    expect(again.status).toBe(200);
    expect(again.body.webhook.secret).not.toBe(secret);
  });

  test('an unknown id is 404; a non-UUID 400 naming id', async () => {
    const r = await env.stack.call('POST', `/api/v1/webhooks/${crypto.randomUUID()}/rotate-secret`, { token: env.keys.writer });
    expect(r).toMatchObject({ status: 404, body: { error: 'webhook not found' } });
    const bad = await env.stack.call('POST', '/api/v1/webhooks/nope/rotate-secret', { token: env.keys.writer });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid param: id: must be a UUID', fields: { id: 'must be a UUID' } } });
  });
});

describe('DELETE /api/v1/webhooks/{id}', () => {
  test('204; the webhook, its deliveries and their attempts are gone; again 404', async () => {
    const webhook = await newWebhook();
    const [pending] = await seedDeliveries(webhook.id, env.tenant.project.id, 1, { status: 'pending', nextAttemptAt: '2999-01-01T00:00:00Z' });
    const [failed] = await seedDeliveries(webhook.id, env.tenant.project.id, 1, { status: 'failed', attempts: 3 });
    await seedAttempt(failed!, 1, 500, 'receiver answered 500');
    const kept = await newWebhook();
    await seedDeliveries(kept.id, env.tenant.project.id, 2);

    const r = await env.stack.call('DELETE', `/api/v1/webhooks/${webhook.id}`, { token: env.keys.deleter });
    expect(r.status).toBe(204);
    expect(r.body).toBeNull();
    expect(await webhookRow(webhook.id)).toBeUndefined();
    expect(await deliveryRows(webhook.id)).toEqual([]);
    expect((await env.stack.sql.query('SELECT 1 FROM webhook_deliveries WHERE id = ANY($1)', [[pending, failed]])).rowCount).toBe(0);
    expect((await env.stack.sql.query('SELECT 1 FROM webhook_attempts WHERE delivery_id = $1', [failed])).rowCount).toBe(0);
    expect(await deliveryRows(kept.id)).toHaveLength(2);

    const list = await env.stack.call('GET', '/api/v1/webhooks', { token: env.keys.reader });
    expect(list.body.webhooks.map((w: { id: string }) => w.id)).not.toContain(webhook.id);
    const again = await env.stack.call('DELETE', `/api/v1/webhooks/${webhook.id}`, { token: env.keys.deleter });
    expect(again).toMatchObject({ status: 404, body: { error: 'webhook not found' } });
  });
});

describe('GET /api/v1/webhooks/{id}/deliveries', () => {
  type Page = { deliveries: { id: string; created_at: string }[]; next: { before: string; before_id: string } | null };

  /** Walks every page with `next`; returns the pages' ids. */
  async function walk(webhookId: string, query: string): Promise<string[][]> {
    const pages: string[][] = [];
    let next: Page['next'] = null;
    do {
      const cursor: string = next ? `&before=${encodeURIComponent(next.before)}&before_id=${next.before_id}` : '';
      const r = await env.stack.call<Page>('GET', `/api/v1/webhooks/${webhookId}/deliveries?${query}${cursor}`, { token: env.keys.reader });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['deliveries', 'next']);
      pages.push(r.body.deliveries.map((d) => d.id));
      next = r.body.next;
      if (next) expect(next).toEqual({ before: r.body.deliveries.at(-1)!.created_at, before_id: r.body.deliveries.at(-1)!.id });
      expect(pages.length).toBeLessThan(100);
    } while (next);
    return pages;
  }

  const expectedOrder = async (webhookId: string, status?: string) =>
    (await env.stack.sql.query(
      `SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND ($2::webhook_delivery_status IS NULL OR status = $2) ORDER BY created_at DESC, id DESC`,
      [webhookId, status ?? null],
    )).rows.map((r) => r.id as string);

  test('newest first by (created_at, id) across pages: rows sharing a created_at (with microseconds) each once, next null at the end', async () => {
    const webhook = await newWebhook();
    const sibling = await newWebhook();
    const project = env.tenant.project.id;
    await seedDeliveries(webhook.id, project, 7, { createdAt: '2026-11-26T02:00:00.123456Z' });
    await seedDeliveries(webhook.id, project, 2, { createdAt: '2026-11-26T02:00:01Z', status: 'failed', attempts: 3 });
    await seedDeliveries(webhook.id, project, 2, { createdAt: '2026-11-26T01:59:59Z', status: 'pending', nextAttemptAt: '2999-01-01T00:00:00Z' });
    await seedDeliveries(sibling.id, project, 4, { createdAt: '2026-11-26T02:00:00.123456Z' }); // another webhook's, interleaved

    const pages = await walk(webhook.id, 'limit=3');
    expect(pages.map((p) => p.length)).toEqual([3, 3, 3, 2]);
    const seen = pages.flat();
    expect(new Set(seen).size).toBe(11);
    expect(seen).toEqual(await expectedOrder(webhook.id));

    const first = await env.stack.call('GET', `/api/v1/webhooks/${webhook.id}/deliveries?limit=3`, { token: env.keys.reader });
    expect(first.body.deliveries.map((d: { status: string }) => d.status)).toEqual(['failed', 'failed', 'succeeded']);
    expect(first.body.deliveries[2].created_at).toBe('2026-11-26T02:00:00.123456Z');
    expect(first.body.next.before).toBe('2026-11-26T02:00:00.123456Z');

    const everything = await env.stack.call('GET', `/api/v1/webhooks/${webhook.id}/deliveries`, { token: env.keys.reader });
    expect(everything.body.deliveries).toHaveLength(11);
    expect(everything.body.next).toBeNull();
  });

  test('status filters, also across pages', async () => {
    const webhook = await newWebhook();
    const project = env.tenant.project.id;
    await seedDeliveries(webhook.id, project, 3, { status: 'succeeded' });
    await seedDeliveries(webhook.id, project, 5, { status: 'failed', attempts: 3 });
    await seedDeliveries(webhook.id, project, 1, { status: 'pending', nextAttemptAt: '2999-01-01T00:00:00Z' });
    for (const status of ['succeeded', 'failed', 'pending']) {
      const pages = await walk(webhook.id, `status=${status}&limit=2`);
      const ids = pages.flat();
      expect(ids).toEqual(await expectedOrder(webhook.id, status));
      expect(ids.length).toBe({ succeeded: 3, failed: 5, pending: 1 }[status]);
    }
  });

  test('each delivery with every field and its attempt log, in attempt order', async () => {
    const webhook = await newWebhook();
    const project = env.tenant.project.id;
    const [failed] = await seedDeliveries(webhook.id, project, 1, { status: 'failed', attempts: 3, createdAt: '2026-11-26T03:00:00Z', data: { subject: 'hi' } });
    await seedAttempt(failed!, 2, 500, null);
    await seedAttempt(failed!, 1, null, 'connection refused');
    await seedAttempt(failed!, 3, 500, null);
    const [pending] = await seedDeliveries(webhook.id, project, 1, { status: 'pending', attempts: 1, nextAttemptAt: '2999-01-01T00:00:00Z', createdAt: '2026-11-26T02:00:00Z' });
    await seedAttempt(pending!, 1, 503, null);
    // A succeeded row whose column still holds its last lease: not shown.
    const [done] = await seedDeliveries(webhook.id, project, 1, { status: 'succeeded', nextAttemptAt: '2026-11-26T01:00:10Z', createdAt: '2026-11-26T01:00:00Z' });

    const r = await env.stack.call('GET', `/api/v1/webhooks/${webhook.id}/deliveries`, { token: env.keys.reader });
    expect(r.status).toBe(200);
    const [a, b, c] = r.body.deliveries;
    for (const d of r.body.deliveries) expect(Object.keys(d).sort()).toEqual(DELIVERY_KEYS);
    expect(a).toEqual({
      id: failed, webhook_id: webhook.id, event: 'email.sent', event_at: '2026-11-26T01:00:00.123Z',
      data: { id: expect.any(String), n: 1, subject: 'hi' }, status: 'failed', attempts: 3, next_attempt_at: null,
      last_status_code: 500, last_error: 'receiver answered 500', redelivery_of: null, replay_id: null,
      created_at: '2026-11-26T03:00:00.000Z', completed_at: '2026-11-26T03:00:00.000Z',
      attempt_log: [
        { attempt: 1, started_at: '2026-11-26T01:01:00.000Z', duration_ms: 101, status_code: null, error: 'connection refused', response_excerpt: '' },
        { attempt: 2, started_at: '2026-11-26T01:02:00.000Z', duration_ms: 102, status_code: 500, error: null, response_excerpt: 'answer 2' },
        { attempt: 3, started_at: '2026-11-26T01:03:00.000Z', duration_ms: 103, status_code: 500, error: null, response_excerpt: 'answer 3' },
      ],
    });
    expect(b).toMatchObject({ id: pending, status: 'pending', attempts: 1, next_attempt_at: '2999-01-01T00:00:00.000Z', completed_at: null, attempt_log: [{ attempt: 1, status_code: 503 }] });
    expect(c).toMatchObject({ id: done, status: 'succeeded', next_attempt_at: null, attempt_log: [] });
  });

  test.each([
    ['before=2026-11-26T02:00:00Z', 'before_id', 'required with before'],
    ['before_id=0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11', 'before', 'required with before_id'],
    ['before=yesterday&before_id=0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11', 'before', 'must be an RFC 3339 timestamp'],
    ['before=2026-11-26T02:00:00Z&before_id=42', 'before_id', 'must be a UUID'],
    ['limit=0', 'limit', 'must be an integer from 1 to 200'],
    ['limit=201', 'limit', 'must be an integer from 1 to 200'],
    ['status=done', 'status', 'must be pending, succeeded or failed'],
    ['offset=50', 'offset', 'not supported: page with before and before_id'],
  ])('?%s is 400 naming the parameter', async (query, field, problem) => {
    const webhook = await newWebhook();
    const r = await env.stack.call('GET', `/api/v1/webhooks/${webhook.id}/deliveries?${query}`, { token: env.keys.reader });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid query: ${field}: ${problem}`, fields: { [field]: problem } });
  });

  test('an unknown webhook is 404, not an empty list', async () => {
    const r = await env.stack.call('GET', `/api/v1/webhooks/${crypto.randomUUID()}/deliveries`, { token: env.keys.reader });
    expect(r).toMatchObject({ status: 404, body: { error: 'webhook not found' } });
  });
});

describe('POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', () => {
  test('202 {delivery}: a new pending delivery copying event, event_at and data, naming its original; the original unchanged', async () => {
    // The receiver is unreachable here (closed port): whatever the dispatcher does, it cannot succeed.
    const webhook = await newWebhook(env.keys.writer, { url: 'http://127.0.0.1:9/closed' });
    const [original] = await seedDeliveries(webhook.id, env.tenant.project.id, 1, { status: 'failed', attempts: 3, event: 'email.failed', data: { subject: 'bounced' } });
    await seedAttempt(original!, 1, 500, null);
    const originalBefore = (await deliveryRows(webhook.id))[0];

    const r = await env.stack.call('POST', `/api/v1/webhooks/${webhook.id}/deliveries/${original}/redeliver`, { token: env.keys.writer });
    expect(r.status).toBe(202);
    expect(Object.keys(r.body)).toEqual(['delivery']);
    expect(r.body.delivery).toEqual({
      id: expect.any(String), webhook_id: webhook.id, event: 'email.failed', event_at: '2026-11-26T01:00:00.123Z',
      data: originalBefore.data, status: 'pending', attempts: 0, next_attempt_at: expect.any(String),
      last_status_code: null, last_error: null, redelivery_of: original, replay_id: null, created_at: expect.any(String), completed_at: null, attempt_log: [],
    });
    expect(r.body.delivery.id).not.toBe(original);
    expect(Math.abs(Date.parse(r.body.delivery.next_attempt_at) - Date.now())).toBeLessThan(60_000);

    const rows = await deliveryRows(webhook.id);
    expect(rows).toHaveLength(2);
    const copy = rows.find((d) => d.id === r.body.delivery.id);
    expect(copy).toMatchObject({
      webhook_id: webhook.id, project_id: env.tenant.project.id, outbox_id: null, redelivery_of: original,
      event: 'email.failed', data: originalBefore.data,
    });
    expect(copy.event_at.toISOString()).toBe(originalBefore.event_at.toISOString());
    expect(rows.find((d) => d.id === original)).toEqual(originalBefore);

    // Any status of the original, a redelivery included.
    const [succeeded] = await seedDeliveries(webhook.id, env.tenant.project.id, 1, { status: 'succeeded' });
    const [pending] = await seedDeliveries(webhook.id, env.tenant.project.id, 1, { status: 'pending', nextAttemptAt: '2999-01-01T00:00:00Z' });
    for (const id of [succeeded, pending, r.body.delivery.id]) {
      const again = await env.stack.call('POST', `/api/v1/webhooks/${webhook.id}/deliveries/${id}/redeliver`, { token: env.keys.writer });
      expect(again.status).toBe(202);
      expect(again.body.delivery).toMatchObject({ status: 'pending', attempts: 0, redelivery_of: id });
    }
    expect(await deliveryRows(webhook.id)).toHaveLength(7);
  });

  test('the dispatcher is woken: the receiver gets the event, signed with the current secret', async () => {
    const webhook = await newWebhook(env.keys.all, { url: hookUrl('redelivered') });
    const secret = (await env.stack.call('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, { token: env.keys.all })).body.webhook.secret;
    const [original] = await seedDeliveries(webhook.id, env.tenant.project.id, 1, { status: 'failed', attempts: 3, data: { subject: 'again' } });
    receiver.clear();
    const r = await env.stack.call('POST', `/api/v1/webhooks/${webhook.id}/deliveries/${original}/redeliver`, { token: env.keys.all });
    expect(r.status).toBe(202);

    const [request] = await eventually(async () => receiver.received().filter((q) => q.path === '/redelivered'), (l) => l.length > 0, 15_000);
    expect(request!.body).toEqual({ event: 'email.sent', timestamp: '2026-11-26T01:00:00.123Z', data: r.body.delivery.data });
    const verdict = await verifyWebhook({
      secret, rawBody: request!.raw, timestamp: request!.headers['x-service-timestamp'] as string, signature: request!.headers['x-service-signature'] as string,
    });
    expect(verdict.ok).toBe(true);
    const listed = await eventually(
      async () => (await env.stack.call('GET', `/api/v1/webhooks/${webhook.id}/deliveries`, { token: env.keys.all })).body.deliveries[0],
      (d) => d.status === 'succeeded',
      15_000,
    );
    expect(listed).toMatchObject({ id: r.body.delivery.id, attempts: 1, last_status_code: 200, next_attempt_at: null, attempt_log: [{ attempt: 1, status_code: 200 }] });
  });

  test('a delivery of another webhook, or unknown, is 404 delivery not found; an unknown webhook 404 webhook not found; nothing created', async () => {
    const webhook = await newWebhook();
    const sibling = await newWebhook();
    const [siblings] = await seedDeliveries(sibling.id, env.tenant.project.id, 1);
    const before = await count('webhook_deliveries');
    const cases: [string, string][] = [
      [`/api/v1/webhooks/${webhook.id}/deliveries/${siblings}/redeliver`, 'delivery not found'],
      [`/api/v1/webhooks/${webhook.id}/deliveries/${crypto.randomUUID()}/redeliver`, 'delivery not found'],
      [`/api/v1/webhooks/${crypto.randomUUID()}/deliveries/${siblings}/redeliver`, 'webhook not found'],
    ];
    for (const [path, error] of cases) {
      const r = await env.stack.call('POST', path, { token: env.keys.writer });
      expect([path, r.status, r.body]).toEqual([path, 404, { error }]);
    }
    const bad = await env.stack.call('POST', `/api/v1/webhooks/${webhook.id}/deliveries/nope/redeliver`, { token: env.keys.writer });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid param: deliveryId: must be a UUID', fields: { deliveryId: 'must be a UUID' } } });
    expect(await count('webhook_deliveries')).toBe(before);
  });
});

describe('tenancy, permissions and audit', () => {
  test('another project\'s webhook and deliveries: 404 on delete, rotate, deliveries and redeliver, and nothing changes', async () => {
    const foreign = await newWebhook((await env.other.key(['webhooks:write'])).token);
    const [foreignDelivery] = await seedDeliveries(foreign.id, env.other.project.id, 1, { status: 'failed', attempts: 3 });
    const own = await newWebhook();
    const rowBefore = await webhookRow(foreign.id);
    const deliveriesBefore = await count('webhook_deliveries');

    const cases: [string, string, string][] = [
      ['DELETE', `/api/v1/webhooks/${foreign.id}`, 'webhook not found'],
      ['POST', `/api/v1/webhooks/${foreign.id}/rotate-secret`, 'webhook not found'],
      ['GET', `/api/v1/webhooks/${foreign.id}/deliveries`, 'webhook not found'],
      ['POST', `/api/v1/webhooks/${foreign.id}/deliveries/${foreignDelivery}/redeliver`, 'webhook not found'],
      ['POST', `/api/v1/webhooks/${own.id}/deliveries/${foreignDelivery}/redeliver`, 'delivery not found'],
    ];
    for (const [method, path, error] of cases) {
      const r = await env.stack.call(method, path, { token: env.keys.all });
      expect([method, path, r.status, r.body]).toEqual([method, path, 404, { error }]);
    }
    expect(await webhookRow(foreign.id)).toEqual(rowBefore);
    expect(await count('webhook_deliveries')).toBe(deliveriesBefore);
    const list = await env.stack.call('GET', '/api/v1/webhooks', { token: env.keys.reader });
    expect(list.body.webhooks.map((w: { id: string }) => w.id)).not.toContain(foreign.id);
  });

  test('each route is judged on its own action; refusals change nothing', async () => {
    const webhook = await newWebhook();
    const [delivery] = await seedDeliveries(webhook.id, env.tenant.project.id, 1);
    const none = (await env.tenant.key(['domains:read'])).token;
    const webhooksBefore = await count('webhooks');
    const deliveriesBefore = await count('webhook_deliveries');
    const sealedBefore = await sealedOf(webhook.id);
    const body = { url: hookUrl(), events: ['email.sent'] };
    const cases: [string, string, string, unknown, string][] = [
      ['POST', '/api/v1/webhooks', env.keys.reader, body, 'permission webhooks:write required'],
      ['POST', '/api/v1/webhooks', env.keys.deleter, body, 'permission webhooks:write required'],
      ['GET', '/api/v1/webhooks', env.keys.writer, undefined, 'permission webhooks:read required'],
      ['DELETE', `/api/v1/webhooks/${webhook.id}`, env.keys.writer, undefined, 'permission webhooks:delete required'],
      ['POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, env.keys.reader, undefined, 'permission webhooks:write required'],
      ['GET', `/api/v1/webhooks/${webhook.id}/deliveries`, env.keys.writer, undefined, 'permission webhooks:read required'],
      ['POST', `/api/v1/webhooks/${webhook.id}/deliveries/${delivery}/redeliver`, env.keys.reader, undefined, 'permission webhooks:write required'],
      ['POST', '/api/v1/webhooks', none, body, 'no access to webhooks in this project'],
      ['DELETE', `/api/v1/webhooks/${webhook.id}`, none, undefined, 'no access to webhooks in this project'],
    ];
    for (const [method, path, token, b, error] of cases) {
      const r = await env.stack.call(method, path, { token, body: b });
      expect([method, path, r.status, r.body]).toEqual([method, path, 403, { error }]);
    }
    expect(await count('webhooks')).toBe(webhooksBefore);
    expect(await count('webhook_deliveries')).toBe(deliveriesBefore);
    expect(await sealedOf(webhook.id)).toBe(sealedBefore);
  });

  test('writes are recorded as webhook.created, webhook.rotate_secret, webhook_delivery.redeliver and webhook.deleted; reads and refusals are not', async () => {
    const before = await settledAuditEvents(env.stack, env.admin);
    const webhook = await newWebhook(env.keys.all, { url: 'http://127.0.0.1:9/closed' });
    const [delivery] = await seedDeliveries(webhook.id, env.tenant.project.id, 1);
    const statuses = [
      (await env.stack.call('GET', '/api/v1/webhooks', { token: env.keys.all })).status,
      (await env.stack.call('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, { token: env.keys.all })).status,
      (await env.stack.call('GET', `/api/v1/webhooks/${webhook.id}/deliveries`, { token: env.keys.all })).status,
      (await env.stack.call('POST', `/api/v1/webhooks/${webhook.id}/deliveries/${delivery}/redeliver`, { token: env.keys.all })).status,
      (await create({ url: 'ftp://example.org', events: ['*'] }, env.keys.all)).status,
      (await env.stack.call('DELETE', `/api/v1/webhooks/${webhook.id}`, { token: env.keys.all })).status,
      (await env.stack.call('DELETE', `/api/v1/webhooks/${webhook.id}`, { token: env.keys.all })).status,
    ];
    expect(statuses).toEqual([200, 200, 200, 202, 400, 204, 404]);
    const events = addedEvents(before, await settledAuditEvents(env.stack, env.admin)).filter((e) => e.project_id === env.tenant.project.id);
    expect(events.map((e) => [e.type, e.method, e.path, e.status])).toEqual([
      ['webhook.created', 'POST', '/api/v1/webhooks', 201],
      ['webhook.rotate_secret', 'POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, 200],
      ['webhook_delivery.redeliver', 'POST', `/api/v1/webhooks/${webhook.id}/deliveries/${delivery}/redeliver`, 202],
      ['webhook.deleted', 'DELETE', `/api/v1/webhooks/${webhook.id}`, 204],
    ]);
  });
});
