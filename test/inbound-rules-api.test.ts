// Inbound routing rules, the API (docs/inbound-rules.md): create, list, get,
// update (reorder by position), delete; bad input refused 400 naming the
// problem with nothing changed; another project's rules and webhooks out of
// reach (404 / 400); the test route decides without side effects; writes audited.
import { beforeAll, describe, expect, test } from 'vitest';
import { forward, inboundMeta, makeInstallationWide, registerDomain, enroll, type EnrolledNode } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';

const env = useTenantStack({ settings: { SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, keys: { writer: ['inbound:write', 'inbound:read', 'webhooks:write'], reader: ['inbound:read'] } });
let otherWriter: string;
let otherWebhook: string;
let myWebhook: string;
let node: EnrolledNode;

const call = (method: string, path: string, body?: unknown, token = env.keys.writer) => env.stack.call(method, path, { token, body });
const rules = async (token = env.keys.writer) => (await call('GET', '/api/v1/inbound-rules', undefined, token)).body.inbound_rules as any[];
const snapshot = async () => (await env.stack.sql.query('SELECT id, position, name, match, action, refuse_text, webhook_ids, forward_to, updated_at FROM inbound_rules ORDER BY project_id, position')).rows;

beforeAll(async () => {
  otherWriter = (await env.other.key(['inbound:write', 'inbound:read', 'webhooks:write'])).token;
  // A loopback receiver (allowed by the file's settings): creating it asks no DNS resolver, so nothing leaves the machine.
  const hook = async (token: string) => {
    const r = await call('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/in', events: ['inbound.received'] }, token);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.webhook.id as string;
  };
  myWebhook = await hook(env.keys.writer);
  otherWebhook = await hook(otherWriter);
  await registerDomain(env.stack, env.tenant.project.id, 'rules-api.test');
  node = await enroll(env.stack, (await env.tenant.key(['relay:write'])).token);
  await makeInstallationWide(env.stack, node.id);
});

describe('CRUD and order', () => {
  test('create appends or inserts at position, update moves, delete closes the gap', async () => {
    const a = await call('POST', '/api/v1/inbound-rules', { name: 'a', match: { recipient: '*@rules-api.test' }, action: 'store' });
    expect(a.status).toBe(201);
    expect(a.body.inbound_rule).toMatchObject({ position: 1, name: 'a', action: 'store', match: { recipient: '*@rules-api.test' }, refuse_text: null, webhook_ids: null, matched_count: 0 });
    const b = await call('POST', '/api/v1/inbound-rules', { name: 'b', match: { sender: { regex: '^bounce-\\d+@' } }, action: 'refuse', refuse_text: 'No bounces here' });
    expect(b.body.inbound_rule).toMatchObject({ position: 2, refuse_text: 'No bounces here' });
    const c = await call('POST', '/api/v1/inbound-rules', { name: 'c', position: 1, action: 'webhooks', webhook_ids: [myWebhook] });
    expect(c.body.inbound_rule).toMatchObject({ position: 1, match: {}, webhook_ids: [myWebhook] });
    expect((await rules()).map((r) => r.name)).toEqual(['c', 'a', 'b']);

    const moved = await call('PATCH', `/api/v1/inbound-rules/${c.body.inbound_rule.id}`, { position: 99 });
    expect(moved.status).toBe(200);
    expect(moved.body.inbound_rule.position).toBe(3);
    expect((await rules()).map((r) => [r.name, r.position])).toEqual([['a', 1], ['b', 2], ['c', 3]]);
    // A new action clears the old one's parameters.
    const changed = await call('PATCH', `/api/v1/inbound-rules/${b.body.inbound_rule.id}`, { action: 'drop', position: 1 });
    expect(changed.body.inbound_rule).toMatchObject({ action: 'drop', refuse_text: null, position: 1 });
    expect((await rules()).map((r) => r.name)).toEqual(['b', 'a', 'c']);

    expect((await call('GET', `/api/v1/inbound-rules/${a.body.inbound_rule.id}`, undefined, env.keys.reader)).body.inbound_rule.name).toBe('a');
    expect((await call('DELETE', `/api/v1/inbound-rules/${b.body.inbound_rule.id}`)).status).toBe(204);
    expect((await rules()).map((r) => [r.name, r.position])).toEqual([['a', 1], ['c', 2]]);
    // Audited as other writes.
    const types = await eventually(async () => (await env.stack.sql.query(`SELECT type FROM audit_events WHERE project_id = $1 AND type LIKE 'inboundrule.%'`, [env.tenant.project.id])).rows.map((r: any) => r.type),
      (t) => t.includes('inboundrule.deleted'));
    expect(new Set(types)).toEqual(new Set(['inboundrule.created', 'inboundrule.updated', 'inboundrule.deleted']));
  });

  test('a reader cannot write', async () => {
    expect((await call('POST', '/api/v1/inbound-rules', { action: 'store' }, env.keys.reader)).status).toBe(403);
  });
});

describe('bad input: 400 naming the problem, nothing changed', () => {
  test.each([
    [{ action: 'store', match: { recipient: { regex: '(a+)+@x' } } }, 'match.recipient.regex', 'nested quantifier'],
    [{ action: 'store', match: { subject: { regex: '(?=x)' } } }, 'match.subject.regex', 'lookahead'],
    [{ action: 'store', match: { subject: { regex: '(x)\\1' } } }, 'match.subject.regex', 'back reference'],
    [{ action: 'store', match: { colour: 'red' } }, 'match', 'colour'],
    [{ action: 'store', extra: 1 }, '', 'extra'],
    [{ action: 'webhooks', webhook_ids: ['00000000-0000-4000-8000-000000000000'] }, 'webhook_ids', 'unknown webhook'],
    [{ action: 'webhooks' }, 'webhook_ids', 'required with action webhooks'],
    [{ action: 'store', refuse_text: 'x' }, 'refuse_text', 'only with action refuse'],
    [{ action: 'refuse', refuse_text: 'two\r\nlines' }, 'refuse_text', 'printable ASCII'],
    [{ action: 'explode' }, 'action', ''],
    // forward takes one address (docs/inbound-rules.md, "Forward"; more in inbound-rules-forward.test.ts).
    [{ action: 'forward' }, 'forward_to', 'required with action forward'],
    [{ action: 'forward', forward_to: 'Ann <ann@partner.example>' }, 'forward_to', 'one address'],
  ])('%j', async (body, field, problem) => {
    const before = await snapshot();
    const r = await call('POST', '/api/v1/inbound-rules', body);
    expect(r.status).toBe(400);
    expect(r.body.error).toContain(problem);
    if (field) expect(Object.keys(r.body.fields ?? {}).join(' ')).toContain(field);
    expect(await snapshot()).toEqual(before);
  });

  test('another project\'s webhook is an unknown webhook; an update with it changes nothing', async () => {
    const r = await call('POST', '/api/v1/inbound-rules', { action: 'webhooks', webhook_ids: [otherWebhook] });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe(`invalid request body: webhook_ids: unknown webhook ${otherWebhook}`);
    const [first] = await rules();
    const before = await snapshot();
    expect((await call('PATCH', `/api/v1/inbound-rules/${first.id}`, { action: 'webhooks', webhook_ids: [otherWebhook] })).status).toBe(400);
    expect((await call('PATCH', `/api/v1/inbound-rules/${first.id}`, { match: { header: { name: 'Bad:Name', pattern: '*' } } })).status).toBe(400);
    expect(await snapshot()).toEqual(before);
  });
});

describe('another project', () => {
  test('cannot get, change, delete or test with this project\'s rules: 404, nothing changed', async () => {
    const [mine] = await rules();
    const before = await snapshot();
    for (const [method, body] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const r = await call(method, `/api/v1/inbound-rules/${mine.id}`, body, otherWriter);
      expect(r.status).toBe(404);
      expect(r.body.error).toBe('inbound rule not found');
    }
    expect(await rules(otherWriter)).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });
});

describe('the test route', () => {
  test('says which rule matched and what would happen, and changes nothing', async () => {
    for (const r of await rules()) await call('DELETE', `/api/v1/inbound-rules/${r.id}`);
    const refuse = (await call('POST', '/api/v1/inbound-rules', { name: 'no-sales', match: { recipient: 'sales+*@rules-api.test' }, action: 'refuse', refuse_text: 'Sales moved' })).body.inbound_rule;
    const drop = (await call('POST', '/api/v1/inbound-rules', { name: 'spam', match: { subject: '*viagra*', dmarc: ['fail'] }, action: 'drop' })).body.inbound_rule;

    const test1 = await call('POST', '/api/v1/inbound-rules/test', { message: { recipients: ['sales+eu@rules-api.test'] } }, env.keys.reader);
    expect(test1.status).toBe(200);
    expect(test1.body).toEqual({ rule: expect.objectContaining({ id: refuse.id }), action: 'refuse', would: 'refuse it at SMTP time: 550 5.7.1 Sales moved' });
    const test2 = await call('POST', '/api/v1/inbound-rules/test', { message: { recipients: ['a@rules-api.test'], subject: 'Cheap VIAGRA', auth: { spf: 'none', dkim: 'none', dmarc: 'fail', aligned: false } } }, env.keys.reader);
    expect(test2.body).toMatchObject({ rule: { id: drop.id }, action: 'drop' });
    const test3 = await call('POST', '/api/v1/inbound-rules/test', { message: { recipients: ['a@rules-api.test'], subject: 'Cheap VIAGRA' } }, env.keys.reader);
    expect(test3.body).toMatchObject({ rule: null, action: 'store' });
    // A raw message: its subject read from its header, encoded words decoded, folded lines unfolded.
    const raw = 'From: Ann <ann@example.org>\r\nSubject: =?utf-8?B?Q2hlYXAgVklBR1JB?=\r\n  today\r\n\r\nSubject: not this one\r\n';
    const test4 = await call('POST', '/api/v1/inbound-rules/test', { message: { recipients: ['a@rules-api.test'], raw, auth: { spf: 'pass', dkim: 'none', dmarc: 'fail', aligned: false } } }, env.keys.reader);
    expect(test4.status, JSON.stringify(test4.body)).toBe(200);
    expect(test4.body).toMatchObject({ rule: { id: drop.id }, action: 'drop' });
    // Raw, or subject and headers: not both; over its bound, refused naming the field.
    const both = await call('POST', '/api/v1/inbound-rules/test', { message: { recipients: ['a@rules-api.test'], raw, subject: 'x' } }, env.keys.reader);
    expect(both.status).toBe(400);
    expect(both.body.fields).toHaveProperty(['message.raw']);
    const huge = await call('POST', '/api/v1/inbound-rules/test', { message: { recipients: ['a@rules-api.test'], raw: `Subject: x\r\n\r\n${'a'.repeat(262_145)}` } }, env.keys.reader);
    expect(huge.status).toBe(400);
    expect(JSON.stringify(huge.body.fields)).toContain('at most 262144 characters');

    // A stored message: forwarded as a node would, then tested by id.
    const meta = inboundMeta(['sales+x@rules-api.test'], { parsed: { ...inboundMeta([]).parsed, subject: 'hello' } });
    // Stored as rejected: the node would have refused it; this one was forwarded without asking.
    const stored = await forward(env.stack, node.token, { meta, raw: 'Subject: hello\r\n\r\nHi\r\n' });
    expect(stored.body.inbound_emails[0]).toMatchObject({ status: 'rejected' });
    const id = stored.body.inbound_emails[0].id;
    const before = await snapshot();
    const outboxBefore = (await env.stack.sql.query('SELECT count(*) FROM outbox')).rows[0].count;
    const auditBefore = (await env.stack.sql.query('SELECT count(*) FROM audit_events')).rows[0].count;
    const byId = await call('POST', '/api/v1/inbound-rules/test', { inbound_email_id: id }, env.keys.reader);
    expect(byId.body).toMatchObject({ rule: { id: refuse.id }, action: 'refuse' });
    expect(await snapshot()).toEqual(before);
    expect((await env.stack.sql.query('SELECT count(*) FROM outbox')).rows[0].count).toBe(outboxBefore);
    expect((await env.stack.sql.query('SELECT matched_count FROM inbound_rules WHERE id = $1', [refuse.id])).rows[0].matched_count).toBe('1');
    await new Promise((r) => setTimeout(r, 300));
    expect((await env.stack.sql.query('SELECT count(*) FROM audit_events')).rows[0].count).toBe(auditBefore);

    // Another project's message is not found; both or neither is 400.
    expect((await call('POST', '/api/v1/inbound-rules/test', { inbound_email_id: id }, otherWriter)).status).toBe(404);
    expect((await call('POST', '/api/v1/inbound-rules/test', {}, env.keys.reader)).status).toBe(400);
  });
});
