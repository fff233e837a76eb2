// The input guard (issue 33, "HTTP" 1 and 3): a NUL or an unpaired surrogate
// anywhere in a JSON body, a query or a path parameter is 400 naming it, a
// body that is not UTF-8 is 400, and a route whose body is required refuses a
// request without one. Each was a 500 (PostgreSQL refusing the value), a
// silently stored value, or a 200 that changed nothing; now nothing is stored.
import { beforeAll, describe, expect, test } from 'vitest';
import { useTenantStack } from './support/tenant-stack.js';
import { sessionCookie } from './support/stack.js';
import { withSession } from './support/console.js';
import { eventually } from './support/wait.js';
import { enroll, heartbeat } from './support/relay.js';

const env = useTenantStack({ keys: { owner: ['*'] }, captureLogs: true });
const NUL_PROBLEM = 'must not contain NUL characters';
const SURROGATE_PROBLEM = 'must be valid Unicode: contains an unpaired surrogate';

/** Rows of every table a refused request here could have written. */
const TABLES = ['api_keys', 'plans', 'users', 'projects', 'platform_credentials', 'member_groups', 'smtp_servers', 'passkeys', 'suppressions',
  'certificates', 'emails', 'outbound_messages', 'templates', 'template_versions', 'template_localizations', 'stylesheets'];
async function counts(): Promise<Record<string, number>> {
  const { rows: [row] } = await env.stack.sql.query(`SELECT ${TABLES.map((t) => `(SELECT count(*)::int FROM ${t}) AS ${t}`).join(', ')}`);
  return row;
}

let asOwner: { token: string; headers: Record<string, string> };
let consoleHeaders: Record<string, string>;
let templateId: string;
let versionId: string;
let stylesheetId: string;
let passkeyId: string;

beforeAll(async () => {
  asOwner = { token: env.admin, headers: { 'X-Service-Project-Id': env.tenant.project.id } };
  consoleHeaders = withSession(env.stack, await sessionCookie(env.stack, env.tenant.user.id));
  const template = await env.stack.call('POST', '/api/v1/templates', { token: env.keys.owner, body: { name: 'welcome' } });
  templateId = template.body.template.id;
  const version = await env.stack.call('POST', `/api/v1/templates/${templateId}/versions`, { token: env.keys.owner, body: {} });
  versionId = version.body.version.id;
  const sheet = await env.stack.call('POST', '/api/v1/stylesheets', { token: env.keys.owner, body: { name: 'base', css: 'p { color: red }' } });
  stylesheetId = sheet.body.stylesheet.id;
  // A passkey row of the signed-in user, to rename (registering one is console-passkeys.test.ts's).
  const { rows: [pk] } = await env.stack.sql.query(
    `INSERT INTO passkeys (user_id, credential_id, public_key, name) VALUES ($1, $2, 'not-a-key', 'phone') RETURNING id`,
    [env.tenant.user.id, `cred-${crypto.randomUUID()}`],
  );
  passkeyId = pk.id;
});

type Case = [label: string, method: string, path: () => string, body: unknown, field: string, caller?: 'admin' | 'console'];

/** A body otherwise valid for its route, with `bad` in the one field under test. */
const bodyCases = (bad: string): Case[] => [
  ['api key name', 'POST', () => '/api/v1/api-keys', { name: `k${bad}`, permissions: ['emails:read'] }, 'name'],
  ['plan name', 'POST', () => '/api/v1/admin/plans', { name: `p${bad}`, hourly_email_limit: 1 }, 'name', 'admin'],
  ['user name', 'POST', () => '/api/v1/admin/users', { email: `${crypto.randomUUID()}@example.com`, name: `u${bad}` }, 'name', 'admin'],
  ['project name', 'POST', () => '/api/v1/admin/projects', { name: `p${bad}` }, 'name', 'admin'],
  ['credential name', 'POST', () => '/api/v1/admin/credentials', { name: `c${bad}` }, 'name', 'admin'],
  ['member group name', 'POST', () => '/api/v1/member-groups', { name: `g${bad}`, permissions: ['emails:read'] }, 'name'],
  ['smtp pool name', 'POST', () => '/api/v1/admin/smtp-pool', { name: `s${bad}`, host: 'smtp.example.com', port: 587, security: 'none' }, 'name', 'admin'],
  ['passkey name', 'PATCH', () => `/app/api/account/passkeys/${passkeyId}`, { name: `k${bad}` }, 'name', 'console'],
  ['suppression detail', 'POST', () => '/api/v1/suppressions', { address: 'gone@example.org', detail: `asked${bad}` }, 'detail'],
  ['certificate PEM', 'POST', () => '/api/v1/admin/certificates', { name: 'mx1', certificate: `-----BEGIN CERTIFICATE-----${bad}`, private_key: '-----BEGIN PRIVATE KEY-----' }, 'certificate', 'admin'],
  ['send text', 'POST', () => '/api/v1/emails/send', { from: 'news@acme.test', to: ['ann@example.org'], subject: 'Hi', text: `Hi${bad}` }, 'text'],
  ['send subject', 'POST', () => '/api/v1/emails/send', { from: 'news@acme.test', to: ['ann@example.org'], subject: `Hi${bad}`, text: 'Hi' }, 'subject'],
  ['send html', 'POST', () => '/api/v1/emails/send', { from: 'news@acme.test', to: ['ann@example.org'], subject: 'Hi', html: `<p>Hi${bad}</p>` }, 'html'],
  ['send recipient (nested)', 'POST', () => '/api/v1/emails/send', { from: 'news@acme.test', to: ['ann@example.org', `bob${bad}@example.org`], subject: 'Hi', text: 'Hi' }, 'to.1'],
  ['send attachment filename (nested)', 'POST', () => '/api/v1/emails/send', { from: 'news@acme.test', to: ['ann@example.org'], subject: 'Hi', text: 'Hi', attachments: [{ filename: `a${bad}.txt`, content: 'aGk=' }] }, 'attachments.0.filename'],
  ['localization subject', 'PUT', () => `/api/v1/templates/${templateId}/versions/${versionId}/localizations`, { localizations: [{ language: 'en', subject: `Hi${bad}`, text: 'Hi' }] }, 'localizations.0.subject'],
];

function callAs(caller: Case[5], method: string, path: string, body: unknown) {
  if (caller === 'admin') return env.stack.call(method, path, { token: env.admin, body });
  if (caller === 'console') return env.stack.call(method, path, { headers: consoleHeaders, body });
  return env.stack.call(method, path, { token: env.keys.owner, body });
}

describe('a NUL in a JSON body string', () => {
  test.each(bodyCases('\u0000'))('%s → 400 naming the field, nothing stored', async (_label, method, path, body, field, caller) => {
    const before = await counts();
    const r = await callAs(caller, method, path(), body);
    expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: { error: `invalid request body: ${field}: ${NUL_PROBLEM}`, fields: { [field]: NUL_PROBLEM } } });
    expect(await counts()).toEqual(before);
  });
});

describe('an unpaired surrogate in a JSON body string', () => {
  // JSON.stringify writes a lone surrogate as its `\ud800` escape: what the fuzzer sent.
  test.each(bodyCases('\ud800').filter(([label]) => /api key|send subject|send text|send html|localization/.test(label)))(
    '%s → 400 naming the field, nothing stored', async (_label, method, path, body, field, caller) => {
      const before = await counts();
      const r = await callAs(caller, method, path(), body);
      expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: { error: `invalid request body: ${field}: ${SURROGATE_PROBLEM}`, fields: { [field]: SURROGATE_PROBLEM } } });
      expect(await counts()).toEqual(before);
    });

  test('a lone low half, and a field name holding one, are refused too; a proper pair is stored as sent', async () => {
    const low = await env.stack.call('POST', '/api/v1/api-keys', { token: env.keys.owner, rawBody: '{"name":"k\\udc00x","permissions":[]}' });
    expect(low.status).toBe(400);
    expect(low.body.fields).toEqual({ name: SURROGATE_PROBLEM });
    const key = await env.stack.call('POST', '/api/v1/api-keys', { token: env.keys.owner, rawBody: '{"name":"k","permissions":[],"\\ud800":1}' });
    expect(key.status).toBe(400);
    expect(key.body.error).toBe(`invalid request body: "\\ud800": field name ${SURROGATE_PROBLEM}`);
    const pair = await env.stack.call('POST', '/api/v1/api-keys', { token: env.keys.owner, rawBody: '{"name":"mail \\ud83d\\udce8","permissions":[]}' });
    expect(pair.status, JSON.stringify(pair.body)).toBe(201);
    const { rows } = await env.stack.sql.query('SELECT name FROM api_keys WHERE id = $1', [pair.body.api_key.id]);
    expect(rows).toEqual([{ name: 'mail 📨' }]);
  });
});

describe('a NUL in a query or path parameter', () => {
  test.each([
    ['/api/v1/emails?recipient=a%00b', 'recipient'],
    ['/api/v1/emails?after=2026-01-01%00', 'after'],
    ['/api/v1/sandbox/emails?recipient=%00', 'recipient'],
    ['/api/v1/bounces?recipient=%00', 'recipient'],
    ['/api/v1/bounces?domain=acme.test%00', 'domain'],
    ['/api/v1/suppressions?after=%00', 'after'],
    ['/api/v1/analytics?domain=%00', 'domain'],
  ])('GET %s → 400 naming %s', async (path, name) => {
    const r = await env.stack.call('GET', path, { token: env.keys.owner });
    expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: { error: `invalid query: ${name}: ${NUL_PROBLEM}`, fields: { [name]: NUL_PROBLEM } } });
  });

  test('in the certificates-by-name path → 400 naming the parameter, nothing deleted', async () => {
    const before = await counts();
    for (const method of ['GET', 'DELETE']) {
      const r = await env.stack.call(method, '/api/v1/admin/certificates/mx%001', { token: env.admin });
      expect({ method, status: r.status, body: r.body }).toEqual({ method, status: 400, body: { error: `invalid param: name: ${NUL_PROBLEM}`, fields: { name: NUL_PROBLEM } } });
    }
    expect(await counts()).toEqual(before);
  });
});

describe('the relay channel passes the same guard', () => {
  test('enrolment and a heartbeat with a NUL → 400 naming the field; no node enrolled, nothing recorded', async () => {
    const nodes = async () => (await env.stack.sql.query('SELECT count(*)::int AS n, max(last_heartbeat_at) AS beat FROM relay_nodes')).rows[0];
    const refused = await env.stack.call('POST', '/relay/v1/enroll', { token: env.keys.owner, body: { name: 'mx\u0000', version: '0.1.0' } });
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 400, body: { error: `invalid request body: name: ${NUL_PROBLEM}`, fields: { name: NUL_PROBLEM } } });
    const node = await enroll(env.stack, env.keys.owner);
    const before = await nodes();
    const beat = await heartbeat(env.stack, node.token, { version: '0.1.0\ud800' });
    expect({ status: beat.status, body: beat.body }).toEqual({ status: 400, body: { error: `invalid request body: version: ${SURROGATE_PROBLEM}`, fields: { version: SURROGATE_PROBLEM } } });
    expect(await nodes()).toEqual(before);
  });
});

describe('a value only the database refuses', () => {
  // Year 0 passes the RFC 3339 check but is no PostgreSQL timestamp (SQLSTATE 22008): it was a 500.
  test('is 400 `invalid value: <the server\'s message>`, with the request id the log names it by', async () => {
    const r = await env.stack.call('GET', `/api/v1/emails?before=0000-01-01T00:00:00Z&before_id=${crypto.randomUUID()}`, { token: env.keys.owner });
    expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: { error: expect.stringMatching(/^invalid value: .*out of range/) } });
    expect(r.body.error).not.toMatch(/select|where|\$1/i);
    const requestId = r.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    await eventually(async () => env.stack.logs(), (logs) => logs.some((l) => l.message.startsWith(`request ${requestId} (GET /api/v1/emails): value refused by the database`)));
  });
});

describe('a body that is not UTF-8', () => {
  test('→ 400 "body is not valid UTF-8", nothing stored (it was stored with U+FFFD)', async () => {
    const before = await counts();
    const bytes = Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xe9]), Buffer.from('","permissions":[]}')]);
    const res = await fetch(`${env.stack.url}/api/v1/api-keys`, {
      method: 'POST', body: bytes, headers: { authorization: `Bearer ${env.keys.owner}`, 'content-type': 'application/json' },
    });
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 400, body: { error: 'body is not valid UTF-8' } });
    expect(await counts()).toEqual(before);
  });

  test('a UTF-8 body with a byte-order mark and non-ASCII text is taken as before', async () => {
    const res = await fetch(`${env.stack.url}/api/v1/api-keys`, {
      method: 'POST', body: Buffer.from('\ufeff{"name":"café","permissions":[]}'), headers: { authorization: `Bearer ${env.keys.owner}`, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(201);
    expect((await res.json()).api_key.name).toBe('café');
  });
});

describe('a required body that is not sent', () => {
  test.each([
    ['PATCH', () => `/api/v1/stylesheets/${stylesheetId}`],
    ['PATCH', () => `/api/v1/templates/${templateId}`],
    ['POST', () => '/api/v1/api-keys'],
  ])('%s → 400 as for any required body, nothing changed', async (method, path) => {
    const before = await counts();
    const sheet = await env.stack.sql.query('SELECT name, css, updated_at FROM stylesheets');
    const r = await env.stack.call(method, path(), { token: env.keys.owner });
    expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: { error: 'request body required: send a JSON object with Content-Type: application/json' } });
    expect(await counts()).toEqual(before);
    expect((await env.stack.sql.query('SELECT name, css, updated_at FROM stylesheets')).rows).toEqual(sheet.rows);
  });

  test('an empty JSON object is still a body: a PATCH with {} answers as before', async () => {
    const r = await env.stack.call('PATCH', `/api/v1/stylesheets/${stylesheetId}`, { token: env.keys.owner, body: {} });
    expect(r.status).toBe(200);
  });
});
