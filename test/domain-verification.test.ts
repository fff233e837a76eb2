// Sending domains (issue 9, "Domains"): a DKIM key pair per domain, the DNS
// records to publish, verification through the configured DoH resolver (a real
// one on loopback here), periodic re-verification, and what the send route
// asks of a from-domain.
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { useTenantStack } from './support/tenant-stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';
import { startDohResponder, type DohResponder } from './support/doh-responder.js';
import { unseal } from '../edge/src/crypto/seal.js';
import { DKIM_SEAL_CONTEXT } from '../edge/src/services/domains/keys.js';
import { reverifyDomains } from '../edge/src/services/domains/reverify.js';
import { dkimForJob, sendingDomain } from '../edge/src/services/domains/sendable.js';

const PUBLIC_HOST = 'mx.edgemail.test';
let doh: DohResponder;
const settings: Record<string, string> = { SERVICE_SERVER_PUBLIC_URL: `https://${PUBLIC_HOST}` };
beforeAll(async () => {
  doh = await startDohResponder();
  settings.SERVICE_DNS_DOH_URL = doh.url;
});
afterAll(async () => { await doh?.close(); });

const env = useTenantStack({ settings, keys: { writer: ['domains:write', 'domains:read'], reader: ['domains:read'] } });

// The Ed25519 SubjectPublicKeyInfo prefix (RFC 8410): the raw 32-byte p= value follows it.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

type Rec = { type: string; name: string; value: string; purpose: string; required: boolean; status: string; found?: string[] };
const unique = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}.example`;
const create = (body: Record<string, unknown>, token = env.keys.writer) => env.stack.call('POST', '/api/v1/domains', { token, body });
const verifyCall = (id: string, token = env.keys.writer) => env.stack.call('POST', `/api/v1/domains/${id}/verify`, { token });
const record = (domain: { dns_records: Rec[] }, purpose: string) => domain.dns_records.find((r) => r.purpose === purpose)!;
const statuses = (domain: { dns_records: Rec[] }) => Object.fromEntries(domain.dns_records.map((r) => [r.purpose, r.status]));
const row = async (id: string) => (await env.stack.sql.query('SELECT * FROM domains WHERE id = $1', [id])).rows[0];
const checkSettings = () => ({
  'dns.doh_url': doh.url, 'server.public_url': `https://${PUBLIC_HOST}`, 'database.crypto.encryption_key': env.stack.encryptionKey,
});

/** Creates a domain and publishes its required records (DKIM and SPF) in the responder. */
async function publishedDomain(label: string, body: Record<string, unknown> = {}) {
  const r = await create({ name: unique(label), ...body });
  expect(r.status).toBe(201);
  const domain = r.body.domain;
  doh.set(record(domain, 'dkim').name, 'TXT', [record(domain, 'dkim').value]);
  doh.set(domain.name, 'TXT', ['google-site-verification=abc', record(domain, 'spf').value]);
  return domain;
}

/** The public key of a `p=` value, for node:crypto. */
function publicKeyOf(algorithm: string, p: string) {
  const der = Buffer.from(p, 'base64');
  return createPublicKey({ key: algorithm === 'rsa' ? der : Buffer.concat([ED25519_SPKI_PREFIX, der]), format: 'der', type: 'spki' });
}

describe('POST /api/v1/domains: a DKIM key pair', () => {
  test.each(['rsa', 'ed25519', undefined])('%s: the published p= verifies what the sealed private key signs', async (algorithm) => {
    const r = await create({ name: unique(`key-${algorithm ?? 'default'}`), ...(algorithm ? { dkim_algorithm: algorithm } : {}) });
    expect(r.status).toBe(201);
    const { domain } = r.body;
    const expected = algorithm ?? 'rsa';
    const now = new Date();
    const selector = `em${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    expect(domain.dkim).toEqual({ selector, algorithm: expected });
    expect(domain.status).toBe('pending');

    const stored = await row(domain.id);
    expect(stored).toMatchObject({ dkim_selector: selector, dkim_algorithm: expected, verified_at: null, last_checked_at: null });
    const dkim = record(domain, 'dkim');
    expect(dkim).toEqual({
      type: 'TXT', name: `${selector}._domainkey.${domain.name}`, value: `v=DKIM1; k=${expected}; p=${stored.dkim_public_key}`,
      purpose: 'dkim', required: true, status: 'pending',
    });
    if (expected === 'ed25519') expect(Buffer.from(stored.dkim_public_key, 'base64')).toHaveLength(32);

    const pem = await unseal(stored.dkim_private_key_sealed, env.stack.encryptionKey, DKIM_SEAL_CONTEXT);
    const privateKey = createPrivateKey(pem);
    expect(privateKey.asymmetricKeyType).toBe(expected);
    if (expected === 'rsa') expect(privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const p = dkim.value.split('p=')[1]!;
    const data = Buffer.from(`signed for ${domain.name}`);
    const digest = expected === 'rsa' ? 'sha256' : null;
    expect(verify(digest, data, publicKeyOf(expected, p), sign(digest, data, privateKey))).toBe(true);
  });

  test('the records to publish: DKIM, SPF including the public host, a DMARC suggestion, MX at the public host', async () => {
    const { domain } = (await create({ name: unique('records') })).body;
    expect(domain.dns_records.map((r: Rec) => [r.type, r.name, r.purpose, r.required, r.status])).toEqual([
      ['TXT', `${domain.dkim.selector}._domainkey.${domain.name}`, 'dkim', true, 'pending'],
      ['TXT', domain.name, 'spf', true, 'pending'],
      ['TXT', `_dmarc.${domain.name}`, 'dmarc', false, 'pending'],
      ['MX', domain.name, 'mx', false, 'pending'],
    ]);
    expect(record(domain, 'spf').value).toBe(`v=spf1 include:${PUBLIC_HOST} ~all`);
    expect(record(domain, 'dmarc').value).toBe('v=DMARC1; p=none');
    expect(record(domain, 'mx').value).toBe(`10 ${PUBLIC_HOST}`);
  });

  test('an unknown dkim_algorithm is 400 naming it, and nothing is stored', async () => {
    const count = async () => Number((await env.stack.sql.query('SELECT count(*) FROM domains')).rows[0].count);
    const before = await count();
    for (const value of ['dsa', 'RSA', 42]) {
      const r = await create({ name: unique('dsa'), dkim_algorithm: value });
      const problem = `unknown DKIM algorithm ${JSON.stringify(value)}: use rsa or ed25519`;
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: `invalid request body: dkim_algorithm: ${problem}`, fields: { dkim_algorithm: problem } });
    }
    expect(await count()).toBe(before);
  });

  test('the private key is in no answer: create, get, list, verify', async () => {
    const created = await create({ name: unique('secret'), dkim_algorithm: 'ed25519' });
    const { domain } = created.body;
    const stored = await row(domain.id);
    const pem = await unseal(stored.dkim_private_key_sealed, env.stack.encryptionKey, DKIM_SEAL_CONTEXT);
    const pemBody = pem.split('\n').slice(1, -2).join('');
    const answers = [
      created,
      await env.stack.call('GET', `/api/v1/domains/${domain.id}`, { token: env.keys.reader }),
      await env.stack.call('GET', '/api/v1/domains', { token: env.keys.reader }),
      await verifyCall(domain.id),
    ];
    for (const answer of answers) {
      expect(answer.status).toBeLessThan(300);
      const text = JSON.stringify(answer.body);
      expect(text).toContain(domain.id);
      for (const secret of ['PRIVATE KEY', 'private_key', pemBody, stored.dkim_private_key_sealed]) expect(text).not.toContain(secret);
    }
  });
});

describe('POST /api/v1/domains/{id}/verify', () => {
  test('nothing published: 200, pending, every record missing, last_checked_at set', async () => {
    const { domain } = (await create({ name: unique('bare') })).body;
    const r = await verifyCall(domain.id);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['domain']);
    expect(r.body.domain).toMatchObject({ id: domain.id, status: 'pending', verified_at: null, dkim: domain.dkim });
    expect(statuses(r.body.domain)).toEqual({ dkim: 'missing', spf: 'missing', dmarc: 'missing', mx: 'missing' });
    expect(r.body.domain.dns_records.every((x: Rec) => x.found === undefined)).toBe(true);
    expect(Date.now() - Date.parse(r.body.domain.last_checked_at)).toBeLessThan(60_000);
    // The lookups asked the resolver for each record's name and type.
    const asked = doh.queries().filter((q) => q.name.endsWith(domain.name));
    expect(asked).toEqual(expect.arrayContaining([
      { name: `${domain.dkim.selector}._domainkey.${domain.name}`, type: 'TXT' }, { name: domain.name, type: 'TXT' },
      { name: `_dmarc.${domain.name}`, type: 'TXT' }, { name: domain.name, type: 'MX' },
    ]));
    // GET shows the stored verdicts.
    const got = await env.stack.call('GET', `/api/v1/domains/${domain.id}`, { token: env.keys.reader });
    expect(got.body.domain).toEqual(r.body.domain);
  });

  test('DKIM and SPF published: verified; the suggestions are reported without blocking; a second check keeps verified_at', async () => {
    const domain = await publishedDomain('published');
    const r = await verifyCall(domain.id);
    expect(r.status).toBe(200);
    expect(r.body.domain.status).toBe('verified');
    expect(statuses(r.body.domain)).toEqual({ dkim: 'ok', spf: 'ok', dmarc: 'missing', mx: 'missing' });
    // The RSA value is longer than 255: the responder splits it into strings, and they are joined back.
    expect(record(domain, 'dkim').value.length).toBeGreaterThan(255);
    expect(record(r.body.domain, 'dkim').found).toEqual([record(domain, 'dkim').value]);
    expect(record(r.body.domain, 'spf').found).toEqual([record(domain, 'spf').value]);
    const verifiedAt = r.body.domain.verified_at;
    expect(Date.now() - Date.parse(verifiedAt)).toBeLessThan(60_000);

    doh.set(`_dmarc.${domain.name}`, 'TXT', ['v=DMARC1; p=reject; rua=mailto:d@example.org']);
    doh.set(domain.name, 'MX', [`10 ${PUBLIC_HOST}.`, '20 backup.example.org.']);
    const again = await verifyCall(domain.id);
    expect(statuses(again.body.domain)).toEqual({ dkim: 'ok', spf: 'ok', dmarc: 'ok', mx: 'ok' });
    expect(again.body.domain.verified_at).toBe(verifiedAt);
    expect(Date.parse(again.body.domain.last_checked_at)).toBeGreaterThanOrEqual(Date.parse(r.body.domain.last_checked_at));
  });

  test('ed25519, and a DKIM value with its key broken by whitespace and other tags in another order, still passes', async () => {
    const { domain } = (await create({ name: unique('spaced'), dkim_algorithm: 'ed25519' })).body;
    const p = record(domain, 'dkim').value.split('p=')[1]!;
    doh.set(record(domain, 'dkim').name, 'TXT', [`k=ed25519; v=DKIM1; t=s; p=${p.slice(0, 20)} ${p.slice(20, 30)}\t${p.slice(30)} `]);
    doh.set(domain.name, 'TXT', ['v=spf1 mx -all']);
    const r = await verifyCall(domain.id);
    expect(r.body.domain.status).toBe('verified');
    expect(statuses(r.body.domain)).toMatchObject({ dkim: 'ok', spf: 'ok' });
  });

  test('a DKIM record with another key is mismatch, showing what was found; two SPF records are mismatch', async () => {
    const { domain } = (await create({ name: unique('other-key') })).body;
    const other = (await create({ name: unique('key-donor') })).body.domain;
    doh.set(record(domain, 'dkim').name, 'TXT', [record(other, 'dkim').value]);
    doh.set(domain.name, 'TXT', ['v=spf1 -all', 'v=spf1 include:elsewhere.example ~all']);
    doh.set(domain.name, 'MX', ['10 mail.elsewhere.example.']);
    const r = await verifyCall(domain.id);
    expect(r.status).toBe(200);
    expect(r.body.domain.status).toBe('pending');
    expect(statuses(r.body.domain)).toEqual({ dkim: 'mismatch', spf: 'mismatch', dmarc: 'missing', mx: 'mismatch' });
    expect(record(r.body.domain, 'dkim').found).toEqual([record(other, 'dkim').value]);
    expect(record(r.body.domain, 'spf').found).toEqual(['v=spf1 -all', 'v=spf1 include:elsewhere.example ~all']);
    expect(record(r.body.domain, 'mx').found).toEqual(['10 mail.elsewhere.example.']);
  });

  test('a verified domain whose DKIM record is gone: failed naming the record, verified_at null; published again: verified', async () => {
    const domain = await publishedDomain('lost');
    expect((await verifyCall(domain.id)).body.domain.status).toBe('verified');
    const dkimName = record(domain, 'dkim').name;
    doh.set(dkimName, 'TXT', 'nxdomain');
    const r = await verifyCall(domain.id);
    expect(r.status).toBe(200);
    expect(r.body.domain).toMatchObject({ status: 'failed', verified_at: null });
    expect(statuses(r.body.domain)).toMatchObject({ dkim: 'missing', spf: 'ok' });
    expect((await row(domain.id)).verified_at).toBeNull();
    expect(await sendingDomain(env.stack.db, env.tenant.project.id, `news@${domain.name}`)).toEqual({
      ok: false, problem: `from domain ${domain.name} failed verification: DKIM record ${dkimName} is missing`,
    });
    // Still gone at the next check: still failed (not pending).
    expect((await verifyCall(domain.id)).body.domain.status).toBe('failed');

    doh.set(dkimName, 'TXT', [record(domain, 'dkim').value]);
    const back = await verifyCall(domain.id);
    expect(back.body.domain.status).toBe('verified');
    expect(back.body.domain.verified_at).not.toBeNull();
  });

  test('the resolver down: 503 naming the problem, and nothing changes', async () => {
    const domain = await publishedDomain('down');
    await verifyCall(domain.id);
    const before = await row(domain.id);
    doh.setDown(true);
    try {
      const r = await verifyCall(domain.id);
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ error: 'could not check the domain\'s DNS records: resolver answered http 503' });
    } finally {
      doh.setDown(false);
    }
    doh.failNext(1, 'servfail');
    const servfail = await verifyCall(domain.id);
    expect(servfail).toMatchObject({ status: 503, body: { error: 'could not check the domain\'s DNS records: resolver answered SERVFAIL (2)' } });
    expect(await row(domain.id)).toEqual(before);
  });

  test('another project\'s domain and an unknown id are 404; a non-UUID is 400; domains:read is 403', async () => {
    const foreign = (await create({ name: unique('foreign') }, (await env.other.key(['domains:write'])).token)).body.domain;
    const before = await row(foreign.id);
    for (const id of [foreign.id, crypto.randomUUID()]) {
      expect(await verifyCall(id)).toMatchObject({ status: 404, body: { error: 'domain not found' } });
    }
    expect(await row(foreign.id)).toEqual(before);
    expect((await verifyCall('nope')).status).toBe(400);
    const mine = (await create({ name: unique('perm') })).body.domain;
    expect(await verifyCall(mine.id, env.keys.reader)).toMatchObject({ status: 403, body: { error: 'permission domains:write required' } });
    expect((await row(mine.id)).last_checked_at).toBeNull();
  });

  test('a domain registered before DKIM existed gets its key at its first verify', async () => {
    const name = unique('legacy');
    const { rows: [legacy] } = await env.stack.sql.query('INSERT INTO domains (project_id, name) VALUES ($1, $2) RETURNING id', [env.tenant.project.id, name]);
    const got = (await env.stack.call('GET', `/api/v1/domains/${legacy.id}`, { token: env.keys.reader })).body.domain;
    expect(got.dkim).toBeNull();
    expect(got.dns_records.map((r: Rec) => r.purpose)).toEqual(['spf', 'dmarc', 'mx']);
    expect(await sendingDomain(env.stack.db, env.tenant.project.id, `a@${name}`)).toMatchObject({ ok: false, problem: expect.stringContaining('is not verified') });

    const r = await verifyCall(legacy.id);
    expect(r.status).toBe(200);
    expect(r.body.domain.dkim).toEqual({ selector: expect.stringMatching(/^em\d{6}$/), algorithm: 'rsa' });
    expect(statuses(r.body.domain)).toEqual({ dkim: 'missing', spf: 'missing', dmarc: 'missing', mx: 'missing' });
    const stored = await row(legacy.id);
    const pem = await unseal(stored.dkim_private_key_sealed, env.stack.encryptionKey, DKIM_SEAL_CONTEXT);
    expect(createPublicKey(createPrivateKey(pem)).export({ format: 'der', type: 'spki' }).toString('base64')).toBe(stored.dkim_public_key);
    // A second check keeps the key.
    await verifyCall(legacy.id);
    expect((await row(legacy.id)).dkim_public_key).toBe(stored.dkim_public_key);
  });

  test('recorded as domain.verify', async () => {
    const before = await settledAuditEvents(env.stack, env.admin);
    const { domain } = (await create({ name: unique('audit') })).body;
    await verifyCall(domain.id);
    const events = addedEvents(before, await settledAuditEvents(env.stack, env.admin)).filter((e) => e.project_id === env.tenant.project.id);
    expect(events.map((e) => [e.type, e.method, e.path, e.status])).toEqual([
      ['domain.created', 'POST', '/api/v1/domains', 201], ['domain.verify', 'POST', `/api/v1/domains/${domain.id}/verify`, 200],
    ]);
  });
});

describe('reverifyDomains', () => {
  test('re-checks domains last checked more than 6 hours ago, oldest first, `limit` per run', async () => {
    const lost = await publishedDomain('stale-lost');
    expect((await verifyCall(lost.id)).body.domain.status).toBe('verified');
    const appeared = (await create({ name: unique('stale-new') })).body.domain;
    const fresh = await publishedDomain('fresh');
    expect((await verifyCall(fresh.id)).body.domain.status).toBe('verified');
    // Ages: lost checked 8 hours ago, appeared registered 7 hours ago and never checked, fresh checked 5 hours ago.
    await env.stack.sql.query(`UPDATE domains SET last_checked_at = now() - interval '8 hours' WHERE id = $1`, [lost.id]);
    await env.stack.sql.query(`UPDATE domains SET created_at = now() - interval '7 hours' WHERE id = $1`, [appeared.id]);
    await env.stack.sql.query(`UPDATE domains SET last_checked_at = now() - interval '5 hours' WHERE id = $1`, [fresh.id]);
    doh.set(record(lost, 'dkim').name, 'TXT', []);
    doh.set(record(appeared, 'dkim').name, 'TXT', [record(appeared, 'dkim').value]);
    doh.set(appeared.name, 'TXT', [record(appeared, 'spf').value]);
    doh.set(record(fresh, 'dkim').name, 'TXT', 'nxdomain');
    const freshBefore = await row(fresh.id);

    const first = await reverifyDomains(env.stack.db, checkSettings(), 1);
    expect(first).toEqual({ checked: 1, verified: 0, pending: 0, failed: 1, errors: [] });
    expect(await row(lost.id)).toMatchObject({ verified_at: null });
    expect((await env.stack.call('GET', `/api/v1/domains/${lost.id}`, { token: env.keys.reader })).body.domain.status).toBe('failed');
    expect(Date.now() - (await row(lost.id)).last_checked_at.getTime()).toBeLessThan(60_000);
    expect((await row(appeared.id)).last_checked_at).toBeNull();

    const second = await reverifyDomains(env.stack.db, checkSettings(), 10);
    expect(second).toEqual({ checked: 1, verified: 1, pending: 0, failed: 0, errors: [] });
    expect((await env.stack.call('GET', `/api/v1/domains/${appeared.id}`, { token: env.keys.reader })).body.domain.status).toBe('verified');
    expect(await row(fresh.id)).toEqual(freshBefore);
    expect(await reverifyDomains(env.stack.db, checkSettings(), 10)).toEqual({ checked: 0, verified: 0, pending: 0, failed: 0, errors: [] });
  });

  test('a resolver failure leaves the domain as it was and is reported', async () => {
    const domain = (await create({ name: unique('stale-down') })).body.domain;
    await env.stack.sql.query(`UPDATE domains SET created_at = now() - interval '7 hours' WHERE id = $1`, [domain.id]);
    const before = await row(domain.id);
    doh.setDown(true);
    try {
      const report = await reverifyDomains(env.stack.db, checkSettings(), 10);
      expect(report.errors).toEqual([{ domain: domain.name, problem: 'resolver answered http 503' }]);
    } finally {
      doh.setDown(false);
    }
    expect(await row(domain.id)).toEqual(before);
    await env.stack.sql.query('UPDATE domains SET created_at = now() WHERE id = $1', [domain.id]);
  });
});

describe('sendingDomain and dkimForJob', () => {
  test('the from domain must be this project\'s and verified; the answer carries the key to sign with', async () => {
    const project = env.tenant.project.id;
    const foreign = (await create({ name: unique('theirs') }, (await env.other.key(['domains:write'])).token)).body.domain;
    expect(await sendingDomain(env.stack.db, project, `a@${foreign.name}`)).toEqual({ ok: false, problem: `from domain ${foreign.name} is not a domain of this project` });
    expect(await sendingDomain(env.stack.db, project, 'a@nowhere.example')).toEqual({ ok: false, problem: 'from domain nowhere.example is not a domain of this project' });
    expect(await sendingDomain(env.stack.db, project, 'no-at-sign')).toEqual({ ok: false, problem: 'from address "no-at-sign" has no domain' });

    const pending = (await create({ name: unique('unverified') })).body.domain;
    expect(await sendingDomain(env.stack.db, project, `a@${pending.name}`)).toEqual({
      ok: false, problem: `from domain ${pending.name} is not verified: publish its DNS records and POST /api/v1/domains/${pending.id}/verify`,
    });

    const domain = await publishedDomain('sender', { dkim_algorithm: 'ed25519' });
    await verifyCall(domain.id);
    const verdict = await sendingDomain(env.stack.db, project, `Acme News <News@${domain.name.toUpperCase()}>`);
    const stored = await row(domain.id);
    expect(verdict).toEqual({
      ok: true,
      domain: { id: domain.id, name: domain.name, selector: domain.dkim.selector, algorithm: 'ed25519', privateKeySealed: stored.dkim_private_key_sealed },
    });
    // A subdomain is a domain of its own.
    expect((await sendingDomain(env.stack.db, project, `a@news.${domain.name}`)).ok).toBe(false);

    const job = await dkimForJob({ 'database.crypto.encryption_key': env.stack.encryptionKey }, {
      name: stored.name, dkimSelector: stored.dkim_selector, dkimAlgorithm: stored.dkim_algorithm, dkimPrivateKeySealed: stored.dkim_private_key_sealed,
    });
    expect(job).toEqual({ domain: domain.name, selector: domain.dkim.selector, algorithm: 'ed25519', private_key_pem: expect.stringMatching(/^-----BEGIN PRIVATE KEY-----\n/) });
    const data = Buffer.from('x');
    expect(verify(null, data, publicKeyOf('ed25519', stored.dkim_public_key), sign(null, data, createPrivateKey(job!.private_key_pem)))).toBe(true);
    expect(await dkimForJob({ 'database.crypto.encryption_key': env.stack.encryptionKey }, { name: 'x.example', dkimSelector: null, dkimAlgorithm: null, dkimPrivateKeySealed: null })).toBeNull();
  });
});
