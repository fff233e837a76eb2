// The edge's side of ACME (docs/acme.md), through /relay/v1/acme/* on the real
// stack: one node at a time orders a host (the lease), only when its stored
// certificate is missing or due; http-01 answers published by the lease holder
// and readable by every installation-wide node; the issued pair checked,
// stored as `acme:<host>` with its key sealed, and the lease released; a
// failure kept for operators and holding the host back. Every refusal
// changes nothing.
import { X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, test } from 'vitest';
import { selfSignedPair } from './support/certificate.js';
import { enroll, makeInstallationWide, type EnrolledNode } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';

const HOST = 'mx1.example.net';
const OTHER_HOST = 'mx2.example.net';
const env = useTenantStack({
  settings: { SERVICE_ACME_ENABLED: 'true', SERVICE_ACME_HOSTS: `${HOST},${OTHER_HOST}` },
  keys: { relay: ['relay:write'] },
});
let one: EnrolledNode;
let two: EnrolledNode;

beforeAll(async () => {
  one = await enroll(env.stack, env.keys.relay);
  two = await enroll(env.stack, env.keys.relay);
  await makeInstallationWide(env.stack, one.id);
  await makeInstallationWide(env.stack, two.id);
});

const call = (method: string, path: string, node: EnrolledNode, body?: unknown) => env.stack.call(method, path, { token: node.token, body });
const lease = (node: EnrolledNode, host = HOST) => call('POST', '/relay/v1/acme/leases', node, { host });
const rows = async (query: string, params: unknown[] = []) => (await env.stack.sql.query(query, params)).rows;
const generation = async () => Number((await rows('SELECT generation FROM tls_state'))[0].generation);
const minutesFromNow = (iso: string) => (new Date(iso).getTime() - Date.now()) / 60_000;

describe('refusals', () => {
  test('a node a project key enrolled takes no part: 403 on every route, nothing written', async () => {
    const scoped = await enroll(env.stack, env.keys.relay);
    const message = { error: 'ACME is run by installation-wide relay nodes only' };
    const pair = selfSignedPair({ hosts: [HOST] });
    for (const [method, path, body] of [
      ['POST', '/relay/v1/acme/leases', { host: HOST }],
      ['POST', '/relay/v1/acme/leases/failure', { host: HOST, error: 'x' }],
      ['PUT', '/relay/v1/acme/challenges', { token: 'abc', key_authorization: 'abc.def', host: HOST }],
      ['GET', '/relay/v1/acme/challenges/abc', undefined],
      ['DELETE', '/relay/v1/acme/challenges/abc', undefined],
      ['PUT', '/relay/v1/acme/certificates', { host: HOST, certificate: pair.certificate, chain: '', private_key: pair.privateKey }],
    ] as const) {
      const reply = await call(method, path, scoped, body);
      expect([method, path, reply.status, reply.body]).toEqual([method, path, 403, message]);
    }
    expect(await rows('SELECT host FROM acme_leases UNION ALL SELECT token FROM acme_challenges UNION ALL SELECT name FROM certificates')).toEqual([]);
  });

  test('a host the edge\'s acme.hosts does not name: 409 naming it; a malformed host or token: 400 naming the field', async () => {
    const outside = await lease(one, 'mx9.example.net');
    expect([outside.status, outside.body]).toEqual([409, { error: 'mx9.example.net is not in the edge\'s acme.hosts' }]);
    const upper = await lease(one, 'MX1.example.net');
    expect(upper.status).toBe(400);
    expect(upper.body.fields).toEqual({ host: 'must be a lower-case DNS name' });
    const token = await call('GET', '/relay/v1/acme/challenges/a.b', one);
    expect(token.status).toBe(400);
    expect(token.body.fields).toEqual({ token: 'must be 1 to 128 base64url characters' });
    expect(await rows('SELECT host FROM acme_leases')).toEqual([]);
  });
});

describe('one order per host', () => {
  test('the lease goes to one node; the other is told who holds it until when', async () => {
    const first = await lease(one);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ host: HOST, granted: true, reason: null, not_after: null });
    expect(minutesFromNow(first.body.expires_at)).toBeGreaterThan(9);
    expect(minutesFromNow(first.body.expires_at)).toBeLessThanOrEqual(10);

    const second = await lease(two);
    expect(second.body).toEqual({ host: HOST, granted: false, expires_at: first.body.expires_at, reason: 'held', not_after: null });
    // Not even the holder is granted twice: it is ordering already.
    expect((await lease(one)).body.reason).toBe('held');
    expect(await rows('SELECT node_id FROM acme_leases WHERE host = $1', [HOST])).toEqual([{ node_id: one.id }]);
  });

  test('two nodes asking at once for a free host: exactly one is granted', async () => {
    const answers = await Promise.all([lease(one, OTHER_HOST), lease(two, OTHER_HOST), lease(one, OTHER_HOST), lease(two, OTHER_HOST)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(answers.filter((a) => a.body.granted)).toHaveLength(1);
    await env.stack.sql.query('DELETE FROM acme_leases WHERE host = $1', [OTHER_HOST]);
  });

  test('challenges: published by the lease holder only, read by any node, removed by the holder', async () => {
    const token = 'LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0';
    const challenge = { token, key_authorization: `${token}.thumbprint`, host: HOST };
    const notHolder = await call('PUT', '/relay/v1/acme/challenges', two, challenge);
    expect([notHolder.status, notHolder.body]).toEqual([409, { error: `this node holds no live ACME lease for ${HOST}` }]);
    expect((await call('GET', `/relay/v1/acme/challenges/${token}`, two)).status).toBe(404);

    const published = await call('PUT', '/relay/v1/acme/challenges', one, challenge);
    expect(published.status).toBe(200);
    expect(published.body).toMatchObject(challenge);
    const read = await call('GET', `/relay/v1/acme/challenges/${token}`, two);
    expect([read.status, read.body]).toEqual([200, published.body]);
    const unknown = await call('GET', '/relay/v1/acme/challenges/unknown-token', two);
    expect([unknown.status, unknown.body]).toEqual([404, { error: 'no such ACME challenge' }]);

    expect((await call('DELETE', `/relay/v1/acme/challenges/${token}`, two)).body).toEqual({ token, removed: false });
    expect((await call('GET', `/relay/v1/acme/challenges/${token}`, two)).status).toBe(200);
    expect((await call('DELETE', `/relay/v1/acme/challenges/${token}`, one)).body).toEqual({ token, removed: true });
    expect((await call('GET', `/relay/v1/acme/challenges/${token}`, two)).status).toBe(404);

    // An expired challenge is not served.
    await call('PUT', '/relay/v1/acme/challenges', one, challenge);
    await env.stack.sql.query(`UPDATE acme_challenges SET expires_at = now() - interval '1 second'`);
    expect((await call('GET', `/relay/v1/acme/challenges/${token}`, two)).status).toBe(404);
  });

  test('the issued pair: refused unless it names the host, is valid now and its key matches; stored by the holder only', async () => {
    const store = (node: EnrolledNode, pair: { certificate: string; privateKey: string }, host = HOST) =>
      call('PUT', '/relay/v1/acme/certificates', node, { host, certificate: pair.certificate, chain: '', private_key: pair.privateKey });
    const good = selfSignedPair({ hosts: [HOST, 'localhost'], days: 90 });
    const before = await generation();

    const cases: [{ certificate: string; privateKey: string }, Record<string, string>][] = [
      [selfSignedPair({ hosts: ['mx.other.example'] }), { certificate: `does not name ${HOST} among its subject alternative names` }],
      [selfSignedPair({ hosts: [HOST], days: 1, notBefore: new Date(Date.now() - 3 * 86_400_000) }), { certificate: 'has expired' }],
      [selfSignedPair({ hosts: [HOST], notBefore: new Date(Date.now() + 86_400_000) }), { certificate: 'is not valid yet' }],
    ];
    for (const [pair, fields] of cases) {
      const reply = await store(one, pair);
      expect([reply.status, reply.body.fields]).toEqual([400, fields]);
    }
    const mismatched = await store(one, { certificate: good.certificate, privateKey: selfSignedPair({ hosts: [HOST] }).privateKey });
    expect(mismatched.status).toBe(400);
    expect(Object.keys(mismatched.body.fields)).toEqual(['private_key']);
    const notHolder = await store(two, good);
    expect([notHolder.status, notHolder.body]).toEqual([409, { error: `this node holds no ACME lease for ${HOST}` }]);
    expect(await rows('SELECT name FROM certificates')).toEqual([]);
    expect(await generation()).toBe(before);

    const stored = await store(one, good);
    const fingerprint = new X509Certificate(good.certificate).fingerprint256.replace(/:/g, '').toLowerCase();
    expect([stored.status, stored.body]).toEqual([200, { name: `acme:${HOST}`, host: HOST, fingerprint_sha256: fingerprint, not_after: good.notAfter.toISOString() }]);
    const [row] = await rows(`SELECT * FROM certificates WHERE name = $1`, [`acme:${HOST}`]);
    expect(row).toMatchObject({ kind: 'acme', chain_pem: '', hosts: [HOST, 'localhost'], algorithm: 'ecdsa', key_size: 256, fingerprint_sha256: fingerprint, issuer_id: null });
    expect(new X509Certificate(row.certificate_pem).fingerprint256).toBe(new X509Certificate(good.certificate).fingerprint256);
    expect(row.private_key_sealed).toMatch(/^v1\./);
    expect(row.private_key_sealed).not.toContain('PRIVATE KEY');
    expect(await generation()).toBeGreaterThan(before);
    // The lease is released; the host is not due for 90 days.
    const [released] = await rows('SELECT expires_at <= now() AS expired, last_error FROM acme_leases WHERE host = $1', [HOST]);
    expect(released).toEqual({ expired: true, last_error: null });
    expect((await lease(two)).body).toEqual({ host: HOST, granted: false, expires_at: null, reason: 'not_due', not_after: good.notAfter.toISOString() });
  });

  test('renewal: within 30 days of its end the host is due again; the new pair replaces the row', async () => {
    await env.stack.sql.query(`UPDATE certificates SET not_after = now() + interval '29 days' WHERE name = $1`, [`acme:${HOST}`]);
    const renewing = await lease(two);
    expect(renewing.body).toMatchObject({ granted: true, reason: null });
    const fresh = selfSignedPair({ hosts: [HOST], days: 90 });
    const stored = await call('PUT', '/relay/v1/acme/certificates', two, { host: HOST, certificate: fresh.certificate, chain: '', private_key: fresh.privateKey });
    expect(stored.status).toBe(200);
    expect(await rows(`SELECT certificate_pem FROM certificates WHERE kind = 'acme'`)).toEqual([{ certificate_pem: fresh.certificate }]);
  });

  test('a failure is kept for operators and holds the host back an hour, for every node', async () => {
    await env.stack.sql.query(`UPDATE certificates SET not_after = now() + interval '5 days' WHERE name = $1`, [`acme:${HOST}`]);
    expect((await lease(one)).body.granted).toBe(true);
    const error = 'urn:ietf:params:acme:error:connection: 192.0.2.1: Fetching http://mx1.example.net/.well-known/acme-challenge/x: Connection refused';
    const notHolder = await call('POST', '/relay/v1/acme/leases/failure', two, { host: HOST, error });
    expect([notHolder.status, notHolder.body]).toEqual([409, { error: `this node holds no ACME lease for ${HOST}` }]);
    const reported = await call('POST', '/relay/v1/acme/leases/failure', one, { host: HOST, error });
    expect(reported.status).toBe(200);
    expect(minutesFromNow(reported.body.retry_after)).toBeGreaterThan(59);
    expect(await rows('SELECT last_error FROM acme_leases WHERE host = $1', [HOST])).toEqual([{ last_error: error }]);
    for (const node of [one, two]) {
      expect((await lease(node)).body).toMatchObject({ granted: false, reason: 'held', expires_at: reported.body.retry_after });
    }
  });
});

describe('a lease that has run out', () => {
  // A node that stalled past its 10 minutes (a slow CA, a paused VM) may find another node ordering the host by
  // then: what it stores late must not overwrite what that one stores.
  test('its node stores nothing (409 naming the expiry), nor does it once another node holds the host; the live holder stores', async () => {
    const store = (node: EnrolledNode, pair: { certificate: string; privateKey: string }) =>
      call('PUT', '/relay/v1/acme/certificates', node, { host: OTHER_HOST, certificate: pair.certificate, chain: '', private_key: pair.privateKey });
    const name = `acme:${OTHER_HOST}`;
    const pair = selfSignedPair({ hosts: [OTHER_HOST], days: 90 });
    expect((await lease(one, OTHER_HOST)).body).toMatchObject({ granted: true });
    await env.stack.sql.query(`UPDATE acme_leases SET expires_at = now() - interval '1 second' WHERE host = $1`, [OTHER_HOST]);
    const before = await generation();

    const expired = await store(one, pair);
    expect([expired.status, expired.body]).toEqual([409, { error: `this node's ACME lease for ${OTHER_HOST} has expired: nothing stored (take a new lease and order again)` }]);
    expect(await rows('SELECT name FROM certificates WHERE name = $1', [name])).toEqual([]);
    expect(await rows('SELECT node_id, expires_at <= now() AS expired, last_error FROM acme_leases WHERE host = $1', [OTHER_HOST]))
      .toEqual([{ node_id: one.id, expired: true, last_error: null }]);
    expect(await generation()).toBe(before);

    // Another node takes the host: the first one's store is still refused, whatever it sends.
    expect((await lease(two, OTHER_HOST)).body).toMatchObject({ granted: true });
    const taken = await store(one, pair);
    expect([taken.status, taken.body]).toEqual([409, { error: `this node holds no ACME lease for ${OTHER_HOST}` }]);
    expect(await rows('SELECT name FROM certificates WHERE name = $1', [name])).toEqual([]);
    expect(await rows('SELECT node_id FROM acme_leases WHERE host = $1 AND expires_at > now()', [OTHER_HOST])).toEqual([{ node_id: two.id }]);
    expect(await generation()).toBe(before);

    const stored = await store(two, selfSignedPair({ hosts: [OTHER_HOST], days: 90 }));
    expect(stored.status).toBe(200);
    expect(await rows('SELECT name FROM certificates WHERE name = $1', [name])).toEqual([{ name }]);
  });
});
