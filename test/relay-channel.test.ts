// The relay-node channel, edge side (issue 7, docs/relay-protocol.md):
// enrolment, the node credential and its revocation, heartbeats, the domain
// list, the shared self-signed certificate and the chatter limit.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { selfSignedPair } from './support/certificate.js';
import { enroll, heartbeat, LISTENERS, makeInstallationWide, registerDomain } from './support/relay.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { awayFromWindowEdge } from './support/wait.js';

const CHATTER_LIMIT = 20;
let stack: TestStack;
let admin: string;
let tenant: Awaited<ReturnType<typeof seedProject>>;
let enroller: string;

beforeAll(async () => {
  // This file enrols more nodes in one project than relay_nodes.max_per_project allows by default;
  // the cap itself is tested in relay-enroll-limits.test.ts.
  stack = await startTestStack({ settings: { SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: String(CHATTER_LIMIT), SERVICE_RELAY_NODES_MAX_PER_PROJECT: '0' } });
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin, 'acme');
  enroller = (await tenant.key(['relay:write'])).token;
});
afterAll(async () => { await stack?.stop(); });

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('POST /relay/v1/enroll', () => {
  test('a key holding relay:write enrols a node of its project; the myr_ token is shown once and stored hashed', async () => {
    const r = await stack.call('POST', '/relay/v1/enroll', { token: enroller, body: { name: 'mx1', version: '0.1.0' } });
    expect(r.status).toBe(201);
    const { node, token } = r.body;
    expect(token).toMatch(/^myr_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    expect(node).toEqual({
      id: expect.any(String), project_id: tenant.project.id, name: 'mx1', key_prefix: token.slice(0, 12), revoked: false,
      version: '0.1.0', listeners: [], tls: {}, spool_depth: 0, dead_letters: 0, dead_letter_bytes: 0, last_heartbeat_at: null, last_address: null, created_at: expect.any(String),
    });
    const { rows: [row] } = await stack.sql.query('SELECT * FROM relay_nodes WHERE id = $1', [node.id]);
    expect(row.key_hash).toBe(sha256(token));
    expect(JSON.stringify(row)).not.toContain(token.slice(13));
    // The token is usable at once.
    expect((await heartbeat(stack, token)).status).toBe(200);
  });

  test('a wildcard key may enrol too', async () => {
    const star = (await tenant.key(['*'])).token;
    expect((await stack.call('POST', '/relay/v1/enroll', { token: star, body: { name: 'mx-star' } })).status).toBe(201);
  });

  test.each([
    [['relay:read'], 'permission relay:write required'],
    [['apikeys:read'], 'no access to relay in this project'],
    [[], 'no access to relay in this project'],
  ])('a key holding %j is refused with 403', async (permissions, error) => {
    const { token } = await tenant.key(permissions);
    const r = await stack.call('POST', '/relay/v1/enroll', { token, body: { name: 'nope' } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error });
  });

  test('other credentials are refused: a platform credential (even naming the project), a node credential, none', async () => {
    const asPlatform = await stack.call('POST', '/relay/v1/enroll', {
      token: admin, headers: { 'X-Service-Project-Id': tenant.project.id }, body: { name: 'nope' },
    });
    expect(asPlatform.status).toBe(403);
    expect(asPlatform.body.error).toMatch(/project API key/);

    const node = await enroll(stack, enroller);
    const asNode = await stack.call('POST', '/relay/v1/enroll', { token: node.token, body: { name: 'nope' } });
    expect(asNode.status).toBe(403);
    expect(asNode.body).toEqual({ error: 'relay node credentials are accepted on /relay/v1 only' });

    const anonymous = await stack.call('POST', '/relay/v1/enroll', { body: { name: 'nope' } });
    expect(anonymous.status).toBe(401);
    const { rows } = await stack.sql.query(`SELECT count(*)::int AS n FROM relay_nodes WHERE name = 'nope'`);
    expect(rows[0].n).toBe(0);
  });

  test('a bad body is 400 naming the field', async () => {
    const r = await stack.call('POST', '/relay/v1/enroll', { token: enroller, body: { name: '' } });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.fields)).toEqual(['name']);
  });

  test('a node credential is no API key', async () => {
    const node = await enroll(stack, enroller);
    const r = await stack.call('GET', '/api/v1/api-keys', { token: node.token });
    expect(r.status).toBe(403);
  });
});

describe('the node credential', () => {
  test('heartbeat records version, listeners, TLS, spool depth, time and address', async () => {
    const { id, token } = await enroll(stack, enroller);
    const tls = { source: 'self_signed', not_after: '2027-12-01T00:00:00.000Z' };
    const before = Date.now();
    const r = await heartbeat(stack, token, { version: '0.2.0', tls, spool_depth: 7, dead_letters: 2, dead_letter_bytes: 20_480 });
    expect(r.status).toBe(200);
    expect(r.body.domains_version).toEqual(expect.any(String));
    // The address is the resolved client address, as on every route (locally, the loopback peer).
    expect(r.body.node).toMatchObject({ id, version: '0.2.0', listeners: LISTENERS, tls, spool_depth: 7, dead_letters: 2, dead_letter_bytes: 20_480, last_address: '127.0.0.1' });
    expect(Date.parse(r.body.node.last_heartbeat_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(r.headers.get('ratelimit-limit')).toBe(String(CHATTER_LIMIT));

    // A node older than the dead-letter fields leaves them out: recorded as 0.
    await heartbeat(stack, token);
    const { rows: [row] } = await stack.sql.query('SELECT version, spool_depth, dead_letters, dead_letter_bytes::int AS dead_letter_bytes, listeners, tls, last_heartbeat_at FROM relay_nodes WHERE id = $1', [id]);
    expect(row).toMatchObject({ version: '0.1.0', spool_depth: 0, dead_letters: 0, dead_letter_bytes: 0, listeners: LISTENERS });
  });

  test('a heartbeat with a bad body is 400 naming the field, and changes nothing', async () => {
    const { id, token } = await enroll(stack, enroller);
    const r = await heartbeat(stack, token, { spool_depth: -1, dead_letters: 1.5, dead_letter_bytes: -1, listeners: [{ name: 'inbound', port: 2525, tls: 'maybe', proxy_protocol: false }] });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.fields).sort()).toEqual(['dead_letter_bytes', 'dead_letters', 'listeners.0.tls', 'spool_depth']);
    const { rows: [row] } = await stack.sql.query('SELECT last_heartbeat_at FROM relay_nodes WHERE id = $1', [id]);
    expect(row.last_heartbeat_at).toBeNull();
  });

  test('a heartbeat with counts past their columns is 400 naming each field (not a 500), and changes nothing', async () => {
    const { id, token } = await enroll(stack, enroller);
    const r = await heartbeat(stack, token, { spool_depth: 2 ** 31, dead_letters: 2 ** 31, dead_letter_bytes: 2 ** 53 });
    expect(r.status).toBe(400);
    expect(r.body.fields).toEqual({
      spool_depth: 'must be at most 2147483647',
      dead_letters: 'must be at most 2147483647',
      dead_letter_bytes: 'must be at most 9007199254740991',
    });
    const { rows: [row] } = await stack.sql.query('SELECT last_heartbeat_at, dead_letters FROM relay_nodes WHERE id = $1', [id]);
    expect(row).toEqual({ last_heartbeat_at: null, dead_letters: 0 });
    // The largest values the columns hold are taken.
    const edge = await heartbeat(stack, token, { spool_depth: 2 ** 31 - 1, dead_letters: 2 ** 31 - 1, dead_letter_bytes: Number.MAX_SAFE_INTEGER });
    expect(edge.status).toBe(200);
    expect(edge.body.node).toMatchObject({ spool_depth: 2 ** 31 - 1, dead_letters: 2 ** 31 - 1, dead_letter_bytes: Number.MAX_SAFE_INTEGER });
  });

  test('a revoked node is refused from its next call on', async () => {
    const { id, token } = await enroll(stack, enroller);
    expect((await heartbeat(stack, token)).status).toBe(200);
    await stack.sql.query('UPDATE relay_nodes SET revoked = true, revoked_at = now() WHERE id = $1', [id]);
    for (const r of [await heartbeat(stack, token), await stack.call('GET', '/relay/v1/domains', { token }), await stack.call('GET', '/relay/v1/certificate', { token })]) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: 'relay node revoked' });
    }
  });

  test('unknown, malformed or missing credentials are 401', async () => {
    const unknown = `myr_abcdefgh_${'A'.repeat(43)}`;
    expect(await heartbeat(stack, unknown)).toMatchObject({ status: 401, body: { error: 'invalid relay node credential' } });
    // Right prefix, wrong secret.
    const { token } = await enroll(stack, enroller);
    expect(await heartbeat(stack, `${token.slice(0, 13)}${'B'.repeat(43)}`)).toMatchObject({ status: 401, body: { error: 'invalid relay node credential' } });
    // A project key is no node credential.
    expect(await heartbeat(stack, enroller)).toMatchObject({ status: 401, body: { error: 'invalid relay node credential' } });
    expect(await stack.call('GET', '/relay/v1/domains', { headers: { authorization: 'Basic abc' } })).toMatchObject({ status: 401 });
    expect(await stack.call('GET', '/relay/v1/domains')).toMatchObject({ status: 401, body: { error: 'relay node credential required' } });
  });

  test(`chatter past ratelimit.relay_node_chatter_per_minute is 429 with Retry-After, per node`, async () => {
    const busy = await enroll(stack, enroller);
    const quiet = await enroll(stack, enroller);
    await awayFromWindowEdge();
    const replies = [];
    for (let i = 0; i < CHATTER_LIMIT; i++) replies.push(await stack.call('GET', '/relay/v1/domains', { token: busy.token }));
    expect(replies.map((r) => r.status)).toEqual(Array(CHATTER_LIMIT).fill(200));
    const refused = await heartbeat(stack, busy.token);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: `rate limit exceeded: ${CHATTER_LIMIT} requests per minute` });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    // Another node has its own window.
    expect((await heartbeat(stack, quiet.token)).status).toBe(200);
  });
});

describe('GET /relay/v1/domains', () => {
  test('a node a project key enrolled serves that project\'s domains only; its version ignores the others', async () => {
    const { token } = await enroll(stack, enroller);
    const other = await seedProject(stack, admin, 'umbrella');
    await registerDomain(stack, tenant.project.id, 'own-only.test');
    const before = await stack.call('GET', '/relay/v1/domains', { token });
    expect(before.body.domains).toContain('own-only.test');
    await registerDomain(stack, other.project.id, 'umbrella.test');
    const after = await stack.call('GET', '/relay/v1/domains', { token });
    expect(after.body.domains).not.toContain('umbrella.test');
    expect(after.body.domains).toEqual(before.body.domains);
    expect(after.body.version).toBe(before.body.version);
  });

  test('an installation-wide node: every project\'s domains, lower case and sorted, with a version that changes when one is added or removed', async () => {
    const { id, token } = await enroll(stack, enroller);
    await makeInstallationWide(stack, id);
    const other = await seedProject(stack, admin, 'globex');
    await registerDomain(stack, tenant.project.id, 'acme.test');
    const globex = await registerDomain(stack, other.project.id, 'globex.test');

    const first = await stack.call('GET', '/relay/v1/domains', { token });
    expect(first.status).toBe(200);
    expect(first.body.domains).toEqual(expect.arrayContaining(['acme.test', 'globex.test']));
    expect([...first.body.domains].sort()).toEqual(first.body.domains);
    // The heartbeat carries the same version, and it holds while nothing changes.
    expect((await heartbeat(stack, token)).body.domains_version).toBe(first.body.version);
    expect((await stack.call('GET', '/relay/v1/domains', { token })).body.version).toBe(first.body.version);

    await registerDomain(stack, other.project.id, 'initech.test');
    const added = await stack.call('GET', '/relay/v1/domains', { token });
    expect(added.body.domains).toContain('initech.test');
    expect(added.body.version).not.toBe(first.body.version);
    expect((await heartbeat(stack, token)).body.domains_version).toBe(added.body.version);

    await stack.sql.query('DELETE FROM domains WHERE id = $1', [globex]);
    const removed = await stack.call('GET', '/relay/v1/domains', { token });
    expect(removed.body.domains).not.toContain('globex.test');
    expect(new Set([first.body.version, added.body.version, removed.body.version]).size).toBe(3);
  });
});

describe('the self-signed certificate', () => {
  const hosts = ['127.0.0.1.nip.test', '*.127.0.0.1.nip.test', 'localhost'];
  /** The shared pair is for the operator's installation-wide nodes. */
  const operatorNode = async () => {
    const node = await enroll(stack, enroller);
    await makeInstallationWide(stack, node.id);
    return node;
  };

  test('a node a project key enrolled may neither read nor offer the shared pair', async () => {
    const scoped = await enroll(stack, enroller);
    const message = { error: 'the shared certificate is served to installation-wide relay nodes only' };
    const read = await stack.call('GET', '/relay/v1/certificate?listener=inbound&name=mx.acme.test', { token: scoped.token });
    expect([read.status, read.body]).toEqual([403, message]);
    const pair = selfSignedPair({ hosts, days: 90 });
    const offer = await stack.call('PUT', '/relay/v1/certificate/self-signed', { token: scoped.token, body: { certificate: pair.certificate, private_key: pair.privateKey } });
    expect([offer.status, offer.body]).toEqual([403, message]);
    expect((await stack.sql.query(`SELECT count(*)::int AS n FROM certificates WHERE certificate_pem = $1`, [pair.certificate])).rows).toEqual([{ n: 0 }]);
  });

  test('404 until offered; the first offer is stored, sealed, and every node then gets that one pair', async () => {
    const one = await operatorNode();
    const two = await operatorNode();
    const none = await stack.call('GET', '/relay/v1/certificate?listener=inbound&name=mx.acme.test', { token: one.token });
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ error: 'no certificate' });

    const a = selfSignedPair({ hosts, days: 90 });
    const b = selfSignedPair({ hosts, days: 90 });
    const first = await stack.call('PUT', '/relay/v1/certificate/self-signed', { token: one.token, body: { certificate: a.certificate, private_key: a.privateKey } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ certificate: a.certificate, private_key: a.privateKey, source: 'self_signed', not_after: a.notAfter.toISOString() });

    // A second node's offer (it too was told 404) loses: it is answered with the stored pair.
    const second = await stack.call('PUT', '/relay/v1/certificate/self-signed', { token: two.token, body: { certificate: b.certificate, private_key: b.privateKey } });
    expect(second.status).toBe(200);
    expect(second.body.certificate).toBe(a.certificate);
    expect(second.body.private_key).toBe(a.privateKey);
    const fetched = await stack.call('GET', '/relay/v1/certificate?listener=inbound&name=localhost', { token: two.token });
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(first.body);

    // In the database: one row, the certificate in the clear, the private key sealed.
    const { rows } = await stack.sql.query(`SELECT * FROM certificates WHERE kind = 'self_signed'`);
    expect(rows).toHaveLength(1);
    expect(rows[0].certificate_pem).toBe(a.certificate);
    expect(rows[0].private_key_sealed).toMatch(/^v1\.[A-Za-z0-9+/]{16}\.[A-Za-z0-9+/]+={0,2}$/);
    const keyBody = a.privateKey.split('\n')[1]!;
    expect(JSON.stringify(rows[0])).not.toContain('PRIVATE KEY');
    expect(JSON.stringify(rows[0])).not.toContain(keyBody);

    // A stored pair near its end is renewed by the first fresher offer, and only that one.
    await stack.sql.query(`UPDATE certificates SET not_after = now() + interval '10 days' WHERE kind = 'self_signed'`);
    const c = selfSignedPair({ hosts, days: 90 });
    const renewed = await stack.call('PUT', '/relay/v1/certificate/self-signed', { token: two.token, body: { certificate: c.certificate, private_key: c.privateKey } });
    expect(renewed.body.certificate).toBe(c.certificate);
    const d = selfSignedPair({ hosts, days: 91 });
    const late = await stack.call('PUT', '/relay/v1/certificate/self-signed', { token: one.token, body: { certificate: d.certificate, private_key: d.privateKey } });
    expect(late.body.certificate).toBe(c.certificate);
    expect(late.body.private_key).toBe(c.privateKey);
  });

  test.each([
    ['the key where the certificate goes', (p: ReturnType<typeof selfSignedPair>) => ({ certificate: p.privateKey, private_key: p.privateKey }), 'certificate'],
    ['a certificate where the key goes', (p: ReturnType<typeof selfSignedPair>) => ({ certificate: p.certificate, private_key: p.certificate }), 'private_key'],
    ['not PEM', () => ({ certificate: 'hello', private_key: 'world' }), 'certificate'],
    ['an expired certificate', () => { const p = selfSignedPair({ hosts, days: 1, notBefore: new Date(Date.now() - 3 * 86_400_000) }); return { certificate: p.certificate, private_key: p.privateKey }; }, 'certificate'],
    ['a lifetime past 398 days', () => { const p = selfSignedPair({ hosts, days: 500 }); return { certificate: p.certificate, private_key: p.privateKey }; }, 'certificate'],
  ])('an offer of %s is 400 naming the field', async (_, body, field) => {
    const { token } = await operatorNode();
    const r = await stack.call('PUT', '/relay/v1/certificate/self-signed', { token, body: body(selfSignedPair({ hosts })) });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.fields)).toContain(field);
  });
});
