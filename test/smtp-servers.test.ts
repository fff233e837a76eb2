// SMTP servers (issue 9): a project's own servers and the platform's shared
// pool, managed over the API with the password sealed and never shown, and
// the test route, which speaks SMTP from the Worker (cloudflare:sockets in
// workerd) to real `smtp-server` instances on loopback.
import { createRequire } from 'node:module';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type * as SmtpServerModule from '../relay-node/node_modules/@types/smtp-server/index.js';
import { unseal } from '../edge/src/crypto/seal.js';
import { freePort } from '../edge/local/free-port.js';
import { useTenantStack } from './support/tenant-stack.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { startDohResponder, type DohResponder } from './support/doh-responder.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';

// workerd verifies the certificate of every TLS connection a Worker opens.
// Miniflare adds the certificates of NODE_EXTRA_CA_CERTS to the runtime's
// trust store when it is loaded, so the variable is set before any import
// (vi.hoisted runs first): the `trusted` certificate is believed by the
// Worker, `untrusted` is not. Both name localhost and 127.0.0.1. This relies
// on each test file loading Miniflare afresh (vitest's default isolation);
// the untrusted-certificate tests show that verification stays on.
const certs = await vi.hoisted(async () => {
  const { execFileSync } = await import('node:child_process');
  const { mkdtempSync, readFileSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'edgemail-smtp-probe-'));
  const make = (name: string) => {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', `/CN=localhost`, '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.pem`),
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, `${name}.key`), 'utf8'), cert: readFileSync(join(dir, `${name}.pem`), 'utf8') };
  };
  const trusted = make('trusted');
  const untrusted = make('untrusted');
  writeFileSync(join(dir, 'ca.pem'), trusted.cert);
  process.env.NODE_EXTRA_CA_CERTS = join(dir, 'ca.pem');
  return { dir, trusted, untrusted };
});

// smtp-server is a dependency of the relay node, loaded from there.
const { SMTPServer } = createRequire(new URL('../relay-node/package.json', import.meta.url))('smtp-server') as typeof SmtpServerModule;

// Loopback test servers and documentation addresses: private targets allowed here; the refusal has its own stack below.
const env = useTenantStack({
  settings: { SERVICE_SMTP_SERVERS_ALLOW_PRIVATE_TARGETS: 'true' },
  keys: {
    writer: ['smtpservers:write', 'smtpservers:read'],
    reader: ['smtpservers:read'],
    deleter: ['smtpservers:delete', 'smtpservers:read'],
    wildcard: ['*'],
  },
});

const USER = 'probe-user';
const PASSWORD = 'correct horse battery staple';

interface AuthAttempt { method: string; username: string; password: string | undefined; secure: boolean }
interface TestSmtp { port: number; auths: AuthAttempt[]; sessions: number; close(): Promise<void> }

/** A real SMTP server on 127.0.0.1 that accepts USER / PASSWORD and records every AUTH attempt. */
async function startSmtp(opts: {
  starttls?: boolean; implicitTls?: boolean; cert?: { key: string; cert: string };
  authMethods?: string[]; insecureAuth?: boolean;
}): Promise<TestSmtp> {
  const auths: AuthAttempt[] = [];
  let sessions = 0;
  const cert = opts.cert ?? certs.trusted;
  const server = new SMTPServer({
    logger: false,
    disableReverseLookup: true,
    secure: !!opts.implicitTls,
    key: cert.key,
    cert: cert.cert,
    disabledCommands: opts.starttls || opts.implicitTls ? [] : ['STARTTLS'],
    authMethods: opts.authMethods ?? ['PLAIN', 'LOGIN'],
    allowInsecureAuth: !!opts.insecureAuth,
    onConnect(_session, callback) {
      sessions++;
      callback();
    },
    onAuth(auth, session, callback) {
      auths.push({ method: auth.method, username: auth.username ?? '', password: auth.password, secure: session.secure });
      if (auth.username === USER && auth.password === PASSWORD) return callback(null, { user: USER });
      callback(Object.assign(new Error('5.7.8 Error: authentication failed: bad credentials'), { responseCode: 535 }));
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    auths,
    get sessions() { return sessions; },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A TCP server that accepts and never says a word. */
async function startSilent(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((s) => { sockets.push(s); s.on('error', () => undefined); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); }),
  };
}

let starttlsSmtp: TestSmtp; // STARTTLS with the trusted certificate; AUTH only after it
let untrustedSmtp: TestSmtp; // STARTTLS with a certificate the Worker does not trust
let implicitSmtp: TestSmtp; // TLS from the first byte (port-465 style)
let plainSmtp: TestSmtp; // no STARTTLS; AUTH PLAIN and LOGIN in plain text
let loginOnlySmtp: TestSmtp; // no STARTTLS; AUTH LOGIN only
let silent: { port: number; close(): Promise<void> };

beforeAll(async () => {
  starttlsSmtp = await startSmtp({ starttls: true });
  untrustedSmtp = await startSmtp({ starttls: true, cert: certs.untrusted });
  implicitSmtp = await startSmtp({ implicitTls: true });
  plainSmtp = await startSmtp({ insecureAuth: true });
  loginOnlySmtp = await startSmtp({ insecureAuth: true, authMethods: ['LOGIN'] });
  silent = await startSilent();
});
afterAll(async () => {
  for (const s of [starttlsSmtp, untrustedSmtp, implicitSmtp, plainSmtp, loginOnlySmtp, silent]) await s?.close();
  const { rmSync } = await import('node:fs');
  rmSync(certs.dir, { recursive: true, force: true });
});

const create = (body: unknown, token = env.keys.writer) => env.stack.call('POST', '/api/v1/smtp-servers', { token, body });
const createPool = (body: unknown) => env.stack.call('POST', '/api/v1/admin/smtp-pool', { token: env.admin, body });
const probe = (id: string, query = '', token = env.keys.writer) => env.stack.call('POST', `/api/v1/smtp-servers/${id}/test${query}`, { token });
const rows = async () => (await env.stack.sql.query('SELECT * FROM smtp_servers ORDER BY id')).rows;

/** A project server pointing at a loopback port; returns its id. */
async function serverAt(port: number, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await create({ name: `loopback ${port}`, host: '127.0.0.1', port, ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.smtp_server.id;
}

describe('POST /api/v1/smtp-servers', () => {
  test('201 {smtp_server}: defaults port 587 and starttls; the password sealed, only has_password shown', async () => {
    const r = await create({ name: ' Postmark ', host: 'SMTP.Example.COM.', username: USER, password: PASSWORD });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      smtp_server: {
        id: expect.any(String), project_id: env.tenant.project.id, name: 'Postmark', host: 'smtp.example.com',
        port: 587, security: 'starttls', username: USER, has_password: true, created_at: expect.any(String),
      },
    });
    expect(JSON.stringify(r.body)).not.toContain(PASSWORD);
    const { rows: [row] } = await env.stack.sql.query('SELECT * FROM smtp_servers WHERE id = $1', [r.body.smtp_server.id]);
    expect(row.password_sealed).toMatch(/^v1\./);
    expect(row.password_sealed).not.toContain(PASSWORD);
    expect(await unseal(row.password_sealed, env.stack.encryptionKey, 'smtp_servers.password')).toBe(PASSWORD);
    await expect(unseal(row.password_sealed, env.stack.encryptionKey, 'webhooks.secret')).rejects.toThrow();

    const bare = await create({ name: 'relay', host: '192.0.2.10', port: 465, security: 'tls' });
    expect(bare.status).toBe(201);
    expect(bare.body.smtp_server).toMatchObject({ host: '192.0.2.10', port: 465, security: 'tls', username: null, has_password: false });
    const v6 = await create({ name: 'v6', host: '[2001:DB8::25]', security: 'none', username: 'only-user' });
    expect(v6.status).toBe(201);
    expect(v6.body.smtp_server).toMatchObject({ host: '2001:db8::25', security: 'none', username: 'only-user', has_password: false });
  });

  test.each([
    [{ name: 'x', host: 'smtp://mail.example.com' }, 'host', 'must be a host name or IP address without a scheme (smtp.example.com)'],
    [{ name: 'x', host: 'mail example.com' }, 'host', 'must not contain spaces or control characters'],
    [{ name: 'x', host: 'mail.example.com:587' }, 'host', 'must not include a port: give it in port'],
    [{ name: 'x', host: 'mail_relay.example.com' }, 'host', 'must be a DNS name or IP address: label "mail_relay" may hold only letters, digits and inner hyphens'],
    [{ name: 'x', host: '300.1.2.3' }, 'host', 'is not a valid IP address'],
    [{ name: 'x', host: '' }, 'host', 'must not be empty'],
    [{ name: 'x', host: 'mail.example.com\r\nRSET' }, 'host', 'must not contain CR or LF'],
    [{ name: 'x' }, 'host', 'required'],
    [{ host: 'mail.example.com' }, 'name', 'required'],
    [{ name: '   ', host: 'mail.example.com' }, 'name', 'must not be empty'],
    [{ name: 'a\nb', host: 'mail.example.com' }, 'name', 'must not contain CR or LF'],
    [{ name: 'x', host: 'mail.example.com', port: 0 }, 'port', 'must be an integer from 1 to 65535'],
    [{ name: 'x', host: 'mail.example.com', port: 65536 }, 'port', 'must be an integer from 1 to 65535'],
    [{ name: 'x', host: 'mail.example.com', port: 58.7 }, 'port', 'must be an integer from 1 to 65535'],
    [{ name: 'x', host: 'mail.example.com', port: '587' }, 'port', 'must be an integer from 1 to 65535'],
    [{ name: 'x', host: 'mail.example.com', security: 'ssl' }, 'security', 'must be one of starttls, tls, none'],
    [{ name: 'x', host: 'mail.example.com', password: 'secret' }, 'password', 'requires username'],
    [{ name: 'x', host: 'mail.example.com', username: 'u\r\nMAIL FROM:<x@y>' }, 'username', 'must not contain CR or LF'],
    [{ name: 'x', host: 'mail.example.com', username: 'u', password: 'p\nq' }, 'password', 'must not contain CR or LF'],
    [{ name: 'x', host: 'mail.example.com', username: 'u\0v' }, 'username', 'must not contain NUL characters'],
  ])('%j is 400 naming %s, and nothing is stored', async (body, field, problem) => {
    const before = await rows();
    const r = await create(body);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid request body: ${field}: ${problem}`, fields: expect.objectContaining({ [field]: problem }) });
    expect(await rows()).toEqual(before);
  });

  test('unknown fields are refused; reading or deleting keys cannot create', async () => {
    const extra = await create({ name: 'x', host: 'mail.example.com', password_sealed: 'v1.x' });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toContain('password_sealed');
    const r = await create({ name: 'x', host: 'mail.example.com' }, env.keys.reader);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'permission smtpservers:write required' });
  });
});

describe('GET and DELETE /api/v1/smtp-servers, and tenancy', () => {
  test('a project lists only its own servers, never another project\'s or the pool\'s', async () => {
    const project = await env.tenant.key(['smtpservers:read']);
    const mine = await serverAt(2525, { name: 'mine' });
    const otherKey = (await env.other.key(['smtpservers:write', 'smtpservers:read', 'smtpservers:delete'])).token;
    const theirs = await create({ name: 'theirs', host: 'smtp.globex.test' }, otherKey);
    expect(theirs.status).toBe(201);
    const pool = await createPool({ name: 'pool', host: 'pool.example.net' });
    expect(pool.status).toBe(201);
    expect(pool.body.smtp_server.project_id).toBeNull();

    const list = await env.stack.call('GET', '/api/v1/smtp-servers', { token: project.token });
    expect(list.status).toBe(200);
    const ids = list.body.smtp_servers.map((s: { id: string }) => s.id);
    expect(ids).toContain(mine);
    expect(ids).not.toContain(theirs.body.smtp_server.id);
    expect(ids).not.toContain(pool.body.smtp_server.id);
    expect(list.body.smtp_servers.every((s: { project_id: string }) => s.project_id === env.tenant.project.id)).toBe(true);
    expect(JSON.stringify(list.body)).not.toContain(PASSWORD);
    // Oldest first.
    const created = list.body.smtp_servers.map((s: { created_at: string }) => s.created_at);
    expect([...created].sort()).toEqual(created);

    const otherList = await env.stack.call('GET', '/api/v1/smtp-servers', { token: otherKey });
    expect(otherList.body.smtp_servers.map((s: { id: string }) => s.id)).toEqual([theirs.body.smtp_server.id]);
  });

  test('another project\'s id and a pool id are 404 "smtp server not found" on delete and test, and nothing changes', async () => {
    const otherKey = (await env.other.key(['smtpservers:write'])).token;
    const theirs = (await create({ name: 'theirs', host: 'smtp.globex.test' }, otherKey)).body.smtp_server.id;
    const pool = (await createPool({ name: 'pool', host: 'pool.example.net' })).body.smtp_server.id;
    const before = await rows();
    for (const id of [theirs, pool, crypto.randomUUID()]) {
      const del = await env.stack.call('DELETE', `/api/v1/smtp-servers/${id}`, { token: env.keys.deleter });
      expect([del.status, del.body]).toEqual([404, { error: 'smtp server not found' }]);
      const t = await probe(id);
      expect([t.status, t.body]).toEqual([404, { error: 'smtp server not found' }]);
    }
    expect(await rows()).toEqual(before);
    const bad = await env.stack.call('DELETE', '/api/v1/smtp-servers/not-a-uuid', { token: env.keys.deleter });
    expect(bad.status).toBe(400);
  });

  test('DELETE is 204 and removes the row; a second delete is 404', async () => {
    const id = await serverAt(2526);
    const r = await env.stack.call('DELETE', `/api/v1/smtp-servers/${id}`, { token: env.keys.deleter });
    expect(r.status).toBe(204);
    expect((await env.stack.sql.query('SELECT 1 FROM smtp_servers WHERE id = $1', [id])).rowCount).toBe(0);
    const again = await env.stack.call('DELETE', `/api/v1/smtp-servers/${id}`, { token: env.keys.deleter });
    expect([again.status, again.body]).toEqual([404, { error: 'smtp server not found' }]);
    const noPermission = await env.stack.call('DELETE', `/api/v1/smtp-servers/${await serverAt(2527)}`, { token: env.keys.writer });
    expect(noPermission.status).toBe(403);
  });
});

describe('/api/v1/admin/smtp-pool', () => {
  test('create, list and delete pool rows (project_id null), with the same validation; project rows are not reachable', async () => {
    const r = await createPool({ name: 'shared', host: 'Relay.Example.NET', port: 2587, security: 'starttls', username: 'pool', password: PASSWORD });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      smtp_server: {
        id: expect.any(String), project_id: null, name: 'shared', host: 'relay.example.net', port: 2587,
        security: 'starttls', username: 'pool', has_password: true, created_at: expect.any(String),
      },
    });
    const { rows: [row] } = await env.stack.sql.query('SELECT * FROM smtp_servers WHERE id = $1', [r.body.smtp_server.id]);
    expect(await unseal(row.password_sealed, env.stack.encryptionKey, 'smtp_servers.password')).toBe(PASSWORD);

    const bad = await createPool({ name: 'x', host: 'smtp://relay.example.net', password: 'p' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      error: 'invalid request body: host: must be a host name or IP address without a scheme (smtp.example.com)',
      fields: { host: 'must be a host name or IP address without a scheme (smtp.example.com)' },
    });

    const projectRow = await serverAt(2528);
    const list = await env.stack.call('GET', '/api/v1/admin/smtp-pool', { token: env.admin });
    expect(list.status).toBe(200);
    expect(list.body.smtp_servers.length).toBeGreaterThan(0);
    expect(list.body.smtp_servers.every((s: { project_id: string | null }) => s.project_id === null)).toBe(true);
    expect(list.body.smtp_servers.map((s: { id: string }) => s.id)).toContain(r.body.smtp_server.id);
    expect(JSON.stringify(list.body)).not.toContain(PASSWORD);

    for (const path of [`/api/v1/admin/smtp-pool/${projectRow}`]) {
      const del = await env.stack.call('DELETE', path, { token: env.admin });
      expect([del.status, del.body]).toEqual([404, { error: 'smtp server not found' }]);
      const t = await env.stack.call('POST', `${path}/test`, { token: env.admin });
      expect([t.status, t.body]).toEqual([404, { error: 'smtp server not found' }]);
    }
    expect((await env.stack.sql.query('SELECT 1 FROM smtp_servers WHERE id = $1', [projectRow])).rowCount).toBe(1);

    const del = await env.stack.call('DELETE', `/api/v1/admin/smtp-pool/${r.body.smtp_server.id}`, { token: env.admin });
    expect(del.status).toBe(204);
    expect((await env.stack.sql.query('SELECT 1 FROM smtp_servers WHERE id = $1', [r.body.smtp_server.id])).rowCount).toBe(0);
  });

  test('a project key, even with *, is refused: 403 admin privileges required', async () => {
    const pool = (await createPool({ name: 'pool', host: 'pool.example.net' })).body.smtp_server.id;
    for (const [method, path] of [
      ['POST', '/api/v1/admin/smtp-pool'], ['GET', '/api/v1/admin/smtp-pool'],
      ['DELETE', `/api/v1/admin/smtp-pool/${pool}`], ['POST', `/api/v1/admin/smtp-pool/${pool}/test`],
    ] as const) {
      const r = await env.stack.call(method, path, { token: env.keys.wildcard, body: method === 'POST' ? { name: 'x', host: 'a.example' } : undefined });
      expect([method, path, r.status, r.body]).toEqual([method, path, 403, { error: 'admin privileges required' }]);
    }
  });

  test('the pool test route probes a pool server', async () => {
    const r = await createPool({ name: 'pool plain', host: '127.0.0.1', port: plainSmtp.port, security: 'none', username: USER, password: PASSWORD });
    const t = await env.stack.call('POST', `/api/v1/admin/smtp-pool/${r.body.smtp_server.id}/test`, { token: env.admin });
    expect(t.status).toBe(200);
    expect(t.body.ok).toBe(true);
    expect(t.body.steps.map((s: { step: string }) => s.step)).toEqual(['connect', 'greeting', 'ehlo', 'auth', 'quit']);
  });
});

describe('POST /api/v1/smtp-servers/{id}/test', () => {
  const stepNames = (body: { steps: { step: string }[] }) => body.steps.map((s) => s.step);

  test('security none with AUTH PLAIN: every step ok, with the server\'s replies; the password arrives, and is never echoed', async () => {
    const id = await serverAt(plainSmtp.port, { security: 'none', username: USER, password: PASSWORD });
    const before = plainSmtp.auths.length;
    const r = await probe(id);
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    expect(stepNames(r.body)).toEqual(['connect', 'greeting', 'ehlo', 'auth', 'quit']);
    for (const s of r.body.steps) {
      expect(s).toEqual({ step: s.step, ok: true, ...(s.step === 'connect' ? {} : { reply: expect.any(String) }), duration_ms: expect.any(Number) });
    }
    const [, greeting, ehlo, auth, quit] = r.body.steps;
    expect(greeting.reply).toMatch(/^220 /);
    expect(ehlo.reply).toMatch(/^250-/);
    expect(ehlo.reply).toContain('AUTH PLAIN LOGIN');
    expect(auth.reply).toMatch(/^235 /);
    expect(quit.reply).toMatch(/^221 /);
    expect(plainSmtp.auths.slice(before)).toEqual([{ method: 'PLAIN', username: USER, password: PASSWORD, secure: false }]);
    expect(JSON.stringify(r.body)).not.toContain(PASSWORD);
    expect(JSON.stringify(r.body)).not.toContain(Buffer.from(PASSWORD).toString('base64'));
  });

  test('a wrong password: the auth step fails with the server\'s reply, and the report ends there', async () => {
    const id = await serverAt(plainSmtp.port, { security: 'none', username: USER, password: 'wrong password' });
    const r = await probe(id);
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(false);
    expect(stepNames(r.body)).toEqual(['connect', 'greeting', 'ehlo', 'auth']);
    expect(r.body.steps.at(-1)).toEqual({
      step: 'auth', ok: false, reply: '535 5.7.8 Error: authentication failed: bad credentials',
      error: 'the server answered 535, expected 235', duration_ms: expect.any(Number),
    });
    expect(JSON.stringify(r.body)).not.toContain('wrong password');
  });

  test('AUTH LOGIN when the server offers only LOGIN', async () => {
    const id = await serverAt(loginOnlySmtp.port, { security: 'none', username: USER, password: PASSWORD });
    const before = loginOnlySmtp.auths.length;
    const r = await probe(id);
    expect(r.body.ok).toBe(true);
    expect(stepNames(r.body)).toEqual(['connect', 'greeting', 'ehlo', 'auth', 'quit']);
    expect(loginOnlySmtp.auths.slice(before)).toEqual([{ method: 'LOGIN', username: USER, password: PASSWORD, secure: false }]);
  });

  test('without a username there is no auth step', async () => {
    const id = await serverAt(plainSmtp.port, { security: 'none' });
    const before = plainSmtp.auths.length;
    const r = await probe(id);
    expect(r.body.ok).toBe(true);
    expect(stepNames(r.body)).toEqual(['connect', 'greeting', 'ehlo', 'quit']);
    expect(plainSmtp.auths.length).toBe(before);
  });

  test('security starttls on a server that does not offer it: the starttls step fails and no password is sent', async () => {
    const id = await serverAt(plainSmtp.port, { security: 'starttls', username: USER, password: PASSWORD });
    const before = plainSmtp.auths.length;
    const r = await probe(id);
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(false);
    expect(stepNames(r.body)).toEqual(['connect', 'greeting', 'ehlo', 'starttls']);
    expect(r.body.steps.at(-1)).toEqual({
      step: 'starttls', ok: false, duration_ms: expect.any(Number),
      error: 'the server does not offer STARTTLS, which security starttls requires (the password is never sent in plain text)',
    });
    expect(plainSmtp.auths.length).toBe(before);
  });

  test('nothing listening: the connect step fails', async () => {
    const id = await serverAt(await freePort(), { security: 'none' });
    const r = await probe(id);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: false, steps: [{ step: 'connect', ok: false, error: expect.any(String), duration_ms: expect.any(Number) }] });
  });

  test('a server that never greets: the greeting step times out after timeout_ms', async () => {
    const id = await serverAt(silent.port, { security: 'none' });
    const r = await probe(id, '?timeout_ms=300');
    expect(r.status).toBe(200);
    expect(stepNames(r.body)).toEqual(['connect', 'greeting']);
    expect(r.body.steps[1]).toEqual({ step: 'greeting', ok: false, error: 'no greeting within 300 ms', duration_ms: expect.any(Number) });
    expect(r.body.steps[1].duration_ms).toBeGreaterThanOrEqual(250);
  });

  test.each(['0', '99', '5001', 'abc'])('timeout_ms=%s is 400 naming timeout_ms', async (value) => {
    const id = await serverAt(silent.port, { security: 'none' });
    const r = await probe(id, `?timeout_ms=${value}`);
    expect(r.status).toBe(400);
    expect(r.body.fields).toEqual({ timeout_ms: 'must be an integer from 100 to 5000' });
  });

  test('STARTTLS to a certificate the Worker trusts: TLS, EHLO again, AUTH over TLS, QUIT', async () => {
    const id = await serverAt(starttlsSmtp.port, { security: 'starttls', username: USER, password: PASSWORD });
    const before = starttlsSmtp.auths.length;
    const r = await probe(id);
    expect(r.body, JSON.stringify(r.body)).toMatchObject({ ok: true });
    expect(stepNames(r.body)).toEqual(['connect', 'greeting', 'ehlo', 'starttls', 'ehlo', 'auth', 'quit']);
    const [, , plainEhlo, starttls, tlsEhlo] = r.body.steps;
    expect(plainEhlo.reply).toContain('STARTTLS');
    expect(starttls.reply).toMatch(/^220 /);
    expect(tlsEhlo.reply).toContain('AUTH PLAIN LOGIN');
    expect(starttlsSmtp.auths.slice(before)).toEqual([{ method: 'PLAIN', username: USER, password: PASSWORD, secure: true }]);
  });

  test('implicit TLS (security tls) to a certificate the Worker trusts', async () => {
    const id = await serverAt(implicitSmtp.port, { security: 'tls', username: USER, password: PASSWORD });
    const before = implicitSmtp.auths.length;
    const r = await probe(id);
    expect(r.body, JSON.stringify(r.body)).toMatchObject({ ok: true });
    expect(stepNames(r.body)).toEqual(['connect', 'greeting', 'ehlo', 'auth', 'quit']);
    expect(implicitSmtp.auths.slice(before)).toEqual([{ method: 'PLAIN', username: USER, password: PASSWORD, secure: true }]);
  });

  test('STARTTLS to a certificate the Worker does not trust: the starttls step fails (the handshake is part of it) and no password is sent', async () => {
    const id = await serverAt(untrustedSmtp.port, { security: 'starttls', username: USER, password: PASSWORD });
    const before = untrustedSmtp.auths.length;
    const r = await probe(id);
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(false);
    expect(stepNames(r.body)).toEqual(['connect', 'greeting', 'ehlo', 'starttls']);
    expect(r.body.steps.at(-1)).toEqual({
      step: 'starttls', ok: false, reply: '220 Ready to start TLS', duration_ms: expect.any(Number),
      error: expect.stringMatching(/^TLS handshake failed \(is the certificate valid for 127\.0\.0\.1 and issued by a trusted CA\?\), or the server closed the connection: /),
    });
    expect(untrustedSmtp.auths.length).toBe(before);
  });

  test('implicit TLS to a certificate the Worker does not trust: the connect step fails (it includes the handshake)', async () => {
    const server = await startSmtp({ implicitTls: true, cert: certs.untrusted });
    try {
      const id = await serverAt(server.port, { security: 'tls', username: USER, password: PASSWORD });
      const r = await probe(id);
      expect(r.body.ok).toBe(false);
      expect(r.body.steps).toEqual([{
        step: 'connect', ok: false, duration_ms: expect.any(Number),
        error: expect.stringMatching(new RegExp(`^no TLS connection: nothing answered at 127\\.0\\.0\\.1:${server.port}, or the TLS handshake failed \\(is the certificate valid for 127\\.0\\.0\\.1 and issued by a trusted CA\\?\\): `)),
      }]);
      expect(server.auths).toEqual([]);
    } finally {
      await server.close();
    }
  });

  test('the test is audited as smtpserver.test, in the project; the pool test in the security trail', async () => {
    const before = await settledAuditEvents(env.stack, env.admin);
    const id = await serverAt(plainSmtp.port, { security: 'none' });
    expect((await probe(id)).status).toBe(200);
    const failing = await serverAt(await freePort(), { security: 'none' });
    expect((await probe(failing)).body.ok).toBe(false);
    const pool = (await createPool({ name: 'pool', host: '127.0.0.1', port: plainSmtp.port, security: 'none' })).body.smtp_server.id;
    expect((await env.stack.call('POST', `/api/v1/admin/smtp-pool/${pool}/test`, { token: env.admin })).status).toBe(200);
    const added = addedEvents(before, await settledAuditEvents(env.stack, env.admin));
    const tests = added.filter((e) => e.type === 'smtpserver.test');
    expect(tests.map((e) => [e.project_id, e.path])).toEqual([
      [env.tenant.project.id, `/api/v1/smtp-servers/${id}/test`],
      [env.tenant.project.id, `/api/v1/smtp-servers/${failing}/test`],
    ]);
    expect(added.map((e) => e.type)).toContain('smtpserver.created');
    expect(added.filter((e) => e.type === 'smtppool.test').map((e) => [e.category, e.project_id, e.path]))
      .toEqual([['security', null, `/api/v1/admin/smtp-pool/${pool}/test`]]);
  });
});

describe('private hosts (smtp_servers.allow_private_targets off, the default)', () => {
  let stack: TestStack;
  let doh: DohResponder;
  let token: string;

  beforeAll(async () => {
    doh = await startDohResponder();
    stack = await startTestStack({ settings: { SERVICE_DNS_DOH_URL: doh.url } });
    const admin = await platformToken(stack);
    token = (await (await seedProject(stack, admin, 'private-hosts')).key(['smtpservers:write', 'smtpservers:read'])).token;
  });
  afterAll(async () => {
    await stack?.stop();
    await doh?.close();
  });
  const count = async () => Number((await stack.sql.query('SELECT count(*) FROM smtp_servers')).rows[0].count);

  test.each([
    ['127.0.0.1', 'host 127.0.0.1 is a private address (loopback)'],
    ['10.1.2.3', 'host 10.1.2.3 is a private address (private)'],
    ['169.254.169.254', 'host 169.254.169.254 is a private address (link-local)'],
    ['fd00::25', 'host [fd00::25] is a private address (unique local)'],
  ])('a project server on %s is refused naming host', async (host, problem) => {
    const before = await count();
    const r = await stack.call('POST', '/api/v1/smtp-servers', { token, body: { name: 'inside', host, port: 25 } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid request body: host: ${problem}`, fields: { host: problem } });
    expect(await count()).toBe(before);
  });

  test('a name is resolved: private is refused, public accepted, and the test route checks again', async () => {
    doh.set('relay.inside.example', 'A', ['192.168.1.20']);
    const refused = await stack.call('POST', '/api/v1/smtp-servers', { token, body: { name: 'inside', host: 'relay.inside.example' } });
    expect(refused.status).toBe(400);
    expect(refused.body.fields).toEqual({ host: 'relay.inside.example resolves to 192.168.1.20, a private address (private)' });

    doh.set('smtp.outside.example', 'A', ['93.184.216.34']);
    const created = await stack.call('POST', '/api/v1/smtp-servers', { token, body: { name: 'outside', host: 'smtp.outside.example' } });
    expect(created.status).toBe(201);
    // The name moves inside after the check at create.
    doh.set('smtp.outside.example', 'A', ['127.0.0.1']);
    const probe = await stack.call('POST', `/api/v1/smtp-servers/${created.body.smtp_server.id}/test`, { token });
    expect(probe.status).toBe(200);
    expect(probe.body).toEqual({ ok: false, steps: [{ step: 'connect', ok: false, error: 'host refused: smtp.outside.example resolves to 127.0.0.1, a private address (loopback)', duration_ms: 0 }] });
  });

  test('a resolver that cannot answer is 503 and nothing is stored', async () => {
    const before = await count();
    doh.setDown(true);
    try {
      const r = await stack.call('POST', '/api/v1/smtp-servers', { token, body: { name: 'x', host: 'smtp.unknown.example' } });
      expect(r.status).toBe(503);
      expect(r.body.error).toMatch(/^could not check host: could not resolve smtp\.unknown\.example: /);
    } finally {
      doh.setDown(false);
    }
    expect(await count()).toBe(before);
  });
});
