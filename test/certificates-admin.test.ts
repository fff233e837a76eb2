// The certificate store's admin routes (issue 19): an internal authority,
// certificates it issues, uploaded pairs, list/get/PEM/delete, and the hourly
// renewal of issued certificates, on a real Worker (workerd's WebCrypto) and
// database. What node:crypto can check runs always; `openssl verify` and
// `openssl x509 -text` run when openssl is installed.
import { execFileSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { unseal } from '../edge/src/crypto/seal.js';
import { x509 } from '../edge/src/crypto/x509.js';
import { PRIVATE_KEY_CONTEXT } from '../edge/src/services/certificates/self-signed.js';
import { settledAuditEvents } from './support/audit.js';
import { selfSignedPair } from './support/certificate.js';
import { platformToken, startTestStack, type CallOptions, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const hasOpenssl = existsSync('/usr/bin/openssl') || existsSync('/usr/local/bin/openssl');
const DAY = 86_400_000;
const BASE = '/api/v1/admin/certificates';

let stack: TestStack;
let admin: string;
const dir = mkdtempSync(join(tmpdir(), 'certificates-admin-'));
/** Every response body this file received, to show none carries a private key. */
const responses: string[] = [];

async function call(method: string, path: string, opts: Omit<CallOptions, 'token'> = {}) {
  const reply = await stack.call(method, path, { ...opts, token: admin });
  responses.push(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
  return reply;
}

async function pemOf(name: string): Promise<string> {
  const r = await call('GET', `${BASE}/${encodeURIComponent(name)}/pem`);
  expect(r.status).toBe(200);
  return r.body as string;
}

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
function file(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
}

/** What the store holds, to show a refusal changed nothing. */
async function storeState(): Promise<string> {
  const { rows } = await stack.sql.query('SELECT name, fingerprint_sha256, updated_at FROM certificates ORDER BY name');
  return JSON.stringify(rows);
}

async function expectRefused(method: string, path: string, body: unknown, status: number, problem: RegExp, field?: string) {
  const before = await storeState();
  const r = await call(method, path, { body });
  expect(r.status, String(JSON.stringify(body)).slice(0, 200)).toBe(status);
  expect(r.body.error).toMatch(problem);
  if (field) expect(r.body.fields?.[field]).toMatch(problem);
  expect(await storeState()).toBe(before);
  return r;
}

/** The private key the store holds for `name`, opened with the stack's key. */
async function storedKey(name: string): Promise<KeyObject> {
  const { rows: [row] } = await stack.sql.query('SELECT private_key_sealed FROM certificates WHERE name = $1', [name]);
  return createPrivateKey(await unseal(row.private_key_sealed, stack.encryptionKey, PRIVATE_KEY_CONTEXT));
}

/** A certificate for `key` signed by node:crypto keys, through @peculiar/x509 (for the RSA and authority uploads). */
async function makeCertificate(opts: { key: { privateKey: KeyObject; publicKey: KeyObject }; ca?: boolean; cn: string; hosts?: string[] }): Promise<string> {
  const rsa = opts.key.privateKey.asymmetricKeyType === 'rsa';
  const params = rsa ? { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } : { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const signingKey = await crypto.subtle.importKey('pkcs8', opts.key.privateKey.export({ type: 'pkcs8', format: 'der' }), params, false, ['sign']);
  const cert = await x509.X509CertificateGenerator.create({
    subject: [{ CN: [opts.cn] }], issuer: [{ CN: [opts.cn] }],
    notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 365 * DAY),
    publicKey: new Uint8Array(opts.key.publicKey.export({ type: 'spki', format: 'der' })), signingKey, signingAlgorithm: params,
    extensions: [
      new x509.BasicConstraintsExtension(!!opts.ca, opts.ca ? 0 : undefined, true),
      ...(opts.hosts ? [new x509.SubjectAlternativeNameExtension(opts.hosts.map((value) => ({ type: 'dns' as const, value })))] : []),
    ],
  });
  return `${cert.toString('pem')}\n`;
}

beforeAll(async () => {
  // Submission's TLS is off: an assignment there does not hold its certificate.
  stack = await startTestStack({ settings: { SERVICE_SUBMISSION_TLS_ENABLED: 'false' } });
  admin = await platformToken(stack);
});

afterAll(async () => {
  await stack?.stop();
});

describe('generate-ca', () => {
  test('an ECDSA authority: pathlen:0, critical key usage, ten years, the subject from its fields', async () => {
    const r = await call('POST', `${BASE}/generate-ca`, { body: { name: 'root', subject: { organization: 'Example Ops', country: 'de', unit: 'Mail', state: 'Berlin', locality: 'Berlin' } } });
    expect(r.status).toBe(201);
    expect(r.body.certificate).toMatchObject({
      name: 'root', kind: 'authority', is_authority: true, issuer: null, algorithm: 'ecdsa', key_size: 256,
      hosts: [], assigned_listeners: [], has_chain: false,
    });
    expect(r.body.certificate.subject).toContain('CN=root');
    const pem = await pemOf('root');
    const cert = new X509Certificate(pem);
    expect(cert.ca).toBe(true);
    expect(cert.checkIssued(cert)).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.fingerprint256.replace(/:/g, '').toLowerCase()).toBe(r.body.certificate.fingerprint_sha256);
    expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBe(3650 * DAY);
    expect(cert.subject.split('\n')).toEqual(['C=DE', 'ST=Berlin', 'L=Berlin', 'O=Example Ops', 'OU=Mail', 'CN=root']);
    // The stored key is the certificate's.
    expect(createPublicKey(await storedKey('root')).export({ type: 'spki', format: 'der' })).toEqual(cert.publicKey.export({ type: 'spki', format: 'der' }));
  });

  test.skipIf(!hasOpenssl)('openssl x509 -text shows CA:TRUE, pathlen:0 and keyCertSign+cRLSign, both critical', async () => {
    const text = openssl('x509', '-noout', '-text', '-in', file('root.pem', await pemOf('root')));
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s+CA:TRUE, pathlen:0/);
    expect(text).toMatch(/X509v3 Key Usage: critical\s+Certificate Sign, CRL Sign/);
    expect(text).toMatch(/X509v3 Subject Key Identifier/);
  });

  test('a common name with a comma and "O=" stays one CN', async () => {
    const r = await call('POST', `${BASE}/generate-ca`, { body: { name: 'tricky', validity_days: 30, subject: { common_name: 'x, O=evil' } } });
    expect(r.status).toBe(201);
    const name = new x509.X509Certificate(await pemOf('tricky')).subjectName;
    expect(name.getField('CN')).toEqual(['x, O=evil']);
    expect(name.getField('O')).toEqual([]);
    if (hasOpenssl) {
      expect(openssl('x509', '-noout', '-subject', '-nameopt', 'RFC2253', '-in', file('tricky.pem', await pemOf('tricky'))).trim()).toBe('subject=CN=x\\, O=evil');
    }
  });

  test('an RSA authority: 2048 bits', async () => {
    const r = await call('POST', `${BASE}/generate-ca`, { body: { name: 'rsa-root', algorithm: 'rsa', validity_days: 365 } });
    expect(r.status).toBe(201);
    expect(r.body.certificate).toMatchObject({ algorithm: 'rsa', key_size: 2048, is_authority: true });
    expect(new X509Certificate(await pemOf('rsa-root')).publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  test('refusals: ed25519, a name in use (never replaced), bad days, subject fields and names; nothing stored', async () => {
    await expectRefused('POST', `${BASE}/generate-ca`, { name: 'ed', algorithm: 'ed25519' }, 400, /ed25519 is not accepted for an authority/, 'algorithm');
    await expectRefused('POST', `${BASE}/generate-ca`, { name: 'root' }, 409, /"root" already exists/);
    for (const days of [0, -1, 1.5, 36501, '10']) {
      await expectRefused('POST', `${BASE}/generate-ca`, { name: 'bad-days', validity_days: days }, 400, /whole number of days from 1 to 36500/, 'validity_days');
    }
    await expectRefused('POST', `${BASE}/generate-ca`, { name: 'bad-country', subject: { country: 'DEU' } }, 400, /two-letter country code/, 'subject.country');
    await expectRefused('POST', `${BASE}/generate-ca`, { name: 'bad-cn', subject: { common_name: 'a\nb' } }, 400, /control characters/, 'subject.common_name');
    await expectRefused('POST', `${BASE}/generate-ca`, { name: 'extra', subject: { email: 'a@b' } }, 400, /./);
    for (const name of ['a/b', '../x', 'acme:mx.example.net', '', '-lead', 'x'.repeat(101)]) {
      await expectRefused('POST', `${BASE}/generate-ca`, { name }, 400, /letters, digits/, 'name');
    }
    await expectRefused('POST', `${BASE}/generate-ca`, { name: 'self-signed' }, 409, /service's own certificate/);
  });
});

describe('generate', () => {
  test('an ECDSA leaf: CA:FALSE, SANs (DNS and IP), serverAuth, at most 398 days, stored alone with its issuer', async () => {
    const hosts = ['MX1.Example.NET.', '*.mx.example.net', '192.0.2.25', '2001:DB8::25'];
    const r = await call('POST', `${BASE}/generate`, { body: { name: 'mx1', hosts, issuer: 'root' } });
    expect(r.status).toBe(201);
    expect(r.body.certificate).toMatchObject({
      name: 'mx1', kind: 'issued', is_authority: false, issuer: 'root', algorithm: 'ecdsa', key_size: 256,
      hosts: ['mx1.example.net', '*.mx.example.net', '192.0.2.25', '2001:db8::25'], subject: 'CN=mx1.example.net', shortened_to_issuer: false,
    });
    const root = new X509Certificate(await pemOf('root'));
    const pem = await pemOf('mx1');
    expect(pem.match(/BEGIN CERTIFICATE/g)).toHaveLength(1); // the leaf alone, never with the root
    const leaf = new X509Certificate(pem);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(root)).toBe(true);
    expect(leaf.verify(root.publicKey)).toBe(true);
    expect(leaf.subjectAltName).toBe('DNS:mx1.example.net, DNS:*.mx.example.net, IP Address:192.0.2.25, IP Address:2001:DB8:0:0:0:0:0:25');
    expect(leaf.checkHost('mx1.example.net')).toBe('mx1.example.net');
    expect(leaf.checkIP('192.0.2.25')).toBe('192.0.2.25');
    expect(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)).toBe(398 * DAY);
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    const { rows: [row] } = await stack.sql.query(
      `SELECT c.chain_pem, c.issuer_id = r.id AS by_root FROM certificates c, certificates r WHERE c.name = 'mx1' AND r.name = 'root'`,
    );
    expect(row).toEqual({ chain_pem: '', by_root: true });
    expect(createPublicKey(await storedKey('mx1')).export({ type: 'spki', format: 'der' })).toEqual(leaf.publicKey.export({ type: 'spki', format: 'der' }));
  });

  test.skipIf(!hasOpenssl)('openssl verify accepts the leaf against the root; x509 -text shows its extensions', async () => {
    const root = file('root.pem', await pemOf('root'));
    const leaf = file('mx1.pem', await pemOf('mx1'));
    expect(openssl('verify', '-CAfile', root, leaf).trim()).toBe(`${leaf}: OK`);
    const text = openssl('x509', '-noout', '-text', '-in', leaf);
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s+CA:FALSE/);
    expect(text).toMatch(/X509v3 Key Usage: critical\s+Digital Signature\n/);
    expect(text).toMatch(/X509v3 Extended Key Usage: \s*TLS Web Server Authentication/);
    expect(text).toMatch(/DNS:mx1\.example\.net, DNS:\*\.mx\.example\.net, IP Address:192\.0\.2\.25, IP Address:2001:DB8:0:0:0:0:0:25/);
    expect(text).toMatch(/X509v3 Authority Key Identifier/);
  });

  test('an RSA leaf from the RSA authority: 2048 bits, keyEncipherment', async () => {
    const r = await call('POST', `${BASE}/generate`, { body: { name: 'mx-rsa', hosts: ['rsa.example.net'], issuer: 'rsa-root', algorithm: 'rsa', validity_days: 90 } });
    expect(r.status).toBe(201);
    expect(r.body.certificate).toMatchObject({ algorithm: 'rsa', key_size: 2048, issuer: 'rsa-root' });
    const leaf = new X509Certificate(await pemOf('mx-rsa'));
    expect(leaf.verify(new X509Certificate(await pemOf('rsa-root')).publicKey)).toBe(true);
    expect(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)).toBe(90 * DAY);
    if (hasOpenssl) {
      const text = openssl('x509', '-noout', '-text', '-in', file('mx-rsa.pem', await pemOf('mx-rsa')));
      expect(text).toMatch(/X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment/);
      expect(openssl('verify', '-CAfile', file('rsa-root.pem', await pemOf('rsa-root')), join(dir, 'mx-rsa.pem')).trim()).toMatch(/: OK$/);
    }
  });

  test('a lifetime beyond the issuer\'s end is shortened to it, and says so', async () => {
    const r = await call('POST', `${BASE}/generate`, { body: { name: 'short', hosts: ['short.example.net'], issuer: 'tricky' } });
    expect(r.status).toBe(201);
    expect(r.body.certificate.shortened_to_issuer).toBe(true);
    const issuer = new X509Certificate(await pemOf('tricky'));
    const leaf = new X509Certificate(await pemOf('short'));
    expect(leaf.validTo).toBe(issuer.validTo);
    expect(r.body.certificate.not_after).toBe(new Date(issuer.validTo).toISOString());
  });

  test('refusals, each naming the problem; nothing stored', async () => {
    const ok = { name: 'refused', hosts: ['ok.example.net'], issuer: 'root' };
    const bad: Array<[Record<string, unknown>, number, RegExp, string?]> = [
      [{ hosts: [] }, 400, /at least one DNS name or IP address/, 'hosts'],
      [{ hosts: 'mx.example.net' }, 400, /list of DNS names or IP addresses/, 'hosts'],
      [{ hosts: ['a b.example.net'] }, 400, /spaces/, 'hosts.0'],
      [{ hosts: ['https://mx.example.net'] }, 400, /without a scheme/, 'hosts.0'],
      [{ hosts: ['*.com'] }, 400, /at least two labels after it/, 'hosts.0'],
      [{ hosts: ['a.*.example.com'] }, 400, /whole leftmost label/, 'hosts.0'],
      [{ hosts: ['*x.example.com'] }, 400, /whole leftmost label/, 'hosts.0'],
      [{ hosts: ['*.192.0.2.1'] }, 400, /./, 'hosts.0'],
      [{ hosts: Array.from({ length: 101 }, (_, i) => `h${i}.example.net`) }, 400, /at most 100/, 'hosts'],
      [{ issuer: 'nope' }, 400, /no certificate named "nope"/, 'issuer'],
      [{ issuer: 'mx1' }, 400, /"mx1" is not a certificate authority/, 'issuer'],
      [{ validity_days: 0 }, 400, /from 1 to 398/, 'validity_days'],
      [{ validity_days: -5 }, 400, /from 1 to 398/, 'validity_days'],
      [{ validity_days: 1.5 }, 400, /from 1 to 398/, 'validity_days'],
      [{ validity_days: 399 }, 400, /from 1 to 398/, 'validity_days'],
      [{ algorithm: 'ed25519' }, 400, /one of rsa, ecdsa/, 'algorithm'],
      [{ name: 'mx1' }, 409, /"mx1" already exists/],
      [{ name: 'x:y' }, 400, /letters, digits/, 'name'],
    ];
    for (const [change, status, problem, field] of bad) await expectRefused('POST', `${BASE}/generate`, { ...ok, ...change }, status, problem, field);
    // An expired issuer: its end moved into the past.
    await stack.sql.query(`UPDATE certificates SET not_after = now() - interval '1 day' WHERE name = 'tricky'`);
    await expectRefused('POST', `${BASE}/generate`, { ...ok, issuer: 'tricky' }, 409, /issuer "tricky" expired/);
  });
});

describe('upload', () => {
  test('a new pair is created (201); the same name again replaces it in place (200), assignments kept', async () => {
    const first = selfSignedPair({ hosts: ['up.example.net'] });
    const r = await call('POST', BASE, { body: { name: 'up', certificate: first.certificate, private_key: first.privateKey } });
    expect(r.status).toBe(201);
    expect(r.body.certificate).toMatchObject({ name: 'up', kind: 'uploaded', is_authority: false, issuer: null, hosts: ['up.example.net'], algorithm: 'ecdsa' });
    await stack.sql.query(`INSERT INTO listener_certificates (listener, certificate_id) VALUES ('inbound', $1)`, [r.body.certificate.id]);

    const second = selfSignedPair({ hosts: ['up2.example.net'] });
    const replaced = await call('POST', BASE, { body: { name: 'up', certificate: second.certificate, private_key: second.privateKey } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.certificate).toMatchObject({ id: r.body.certificate.id, hosts: ['up2.example.net'], assigned_listeners: ['inbound'] });
    expect(new X509Certificate(await pemOf('up')).fingerprint256).toBe(new X509Certificate(second.certificate).fingerprint256);
  });

  test('a chain is stored and served after the certificate; PKCS#1 keys are accepted', async () => {
    const caKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const caPem = await makeCertificate({ key: caKeys, ca: true, cn: 'Upload CA' });
    const leafKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const caSigning = await crypto.subtle.importKey('pkcs8', caKeys.privateKey.export({ type: 'pkcs8', format: 'der' }), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
    const leaf = await x509.X509CertificateGenerator.create({
      subject: [{ CN: ['chained.example.net'] }], issuer: new x509.X509Certificate(caPem).subjectName,
      notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 30 * DAY),
      publicKey: new Uint8Array(leafKeys.publicKey.export({ type: 'spki', format: 'der' })), signingKey: caSigning,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } as never,
      extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'chained.example.net' }])],
    });
    const r = await call('POST', BASE, { body: { name: 'chained', certificate: leaf.toString('pem'), private_key: leafKeys.privateKey.export({ type: 'pkcs1', format: 'pem' }), chain: caPem } });
    expect(r.status).toBe(201);
    expect(r.body.certificate).toMatchObject({ has_chain: true, algorithm: 'rsa', key_size: 2048, issuer_subject: 'CN=Upload CA' });
    const pem = await pemOf('chained');
    expect(pem.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(new X509Certificate(pem).subject).toBe('CN=chained.example.net');
    expect(pem.slice(pem.indexOf('-----END CERTIFICATE-----') + 26)).toContain(caPem.trim());
  });

  test('an uploaded authority is stored as one and can issue', async () => {
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const r = await call('POST', BASE, { body: { name: 'their-ca', certificate: await makeCertificate({ key: keys, ca: true, cn: 'Their CA' }), private_key: keys.privateKey.export({ type: 'sec1', format: 'pem' }) } });
    expect(r.status).toBe(201);
    expect(r.body.certificate).toMatchObject({ kind: 'authority', is_authority: true });
    const issued = await call('POST', `${BASE}/generate`, { body: { name: 'from-their-ca', hosts: ['t.example.net'], issuer: 'their-ca', validity_days: 30 } });
    expect(issued.status).toBe(201);
    expect(new X509Certificate(await pemOf('from-their-ca')).verify(keys.publicKey)).toBe(true);
  });

  test('refusals, each naming its field; nothing stored', async () => {
    const pair = selfSignedPair({ hosts: ['r.example.net'] });
    const other = selfSignedPair({ hosts: ['o.example.net'] });
    const expired = selfSignedPair({ hosts: ['old.example.net'], notBefore: new Date(Date.now() - 10 * DAY), days: 5 });
    const future = selfSignedPair({ hosts: ['new.example.net'], notBefore: new Date(Date.now() + DAY), days: 5 });
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const smallPem = await makeCertificate({ key: small, cn: 'small.example.net' });
    const encrypted = createPrivateKey(pair.privateKey).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' });
    const body = { name: 'refused', certificate: pair.certificate, private_key: pair.privateKey };
    const bad: Array<[Record<string, unknown>, number, RegExp, string?]> = [
      [{ certificate: 'garbage' }, 400, /is not a PEM certificate/, 'certificate'],
      [{ certificate: pair.certificate + other.certificate }, 400, /holds 2 certificates: .*intermediates in chain/, 'certificate'],
      [{ private_key: other.privateKey }, 400, /does not match the certificate/, 'private_key'],
      [{ private_key: encrypted }, 400, /is encrypted/, 'private_key'],
      [{ private_key: 'garbage' }, 400, /is not a PEM private key/, 'private_key'],
      [{ certificate: smallPem, private_key: small.privateKey.export({ type: 'pkcs8', format: 'pem' }) }, 400, /RSA key of 1024 bits/, 'certificate'],
      [{ certificate: expired.certificate, private_key: expired.privateKey }, 400, /expired on/, 'certificate'],
      [{ certificate: future.certificate, private_key: future.privateKey }, 400, /is not valid yet/, 'certificate'],
      [{ chain: other.certificate }, 400, /did not sign the certificate/, 'chain'],
      [{ name: 'a/b' }, 400, /letters, digits/, 'name'],
      [{ private_key: undefined }, 400, /required/, 'private_key'],
      [{ name: 'self-signed' }, 409, /service's own certificate/],
      [{ name: 'root' }, 409, /is a certificate authority: an upload does not replace it/],
    ];
    for (const [change, status, problem, field] of bad) await expectRefused('POST', BASE, { ...body, ...change }, status, problem, field);
  });

  test('an authority over a name a listener is serving is refused (409); the service\'s own pair is never replaced', async () => {
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ca = await makeCertificate({ key: keys, ca: true, cn: 'Sneaky CA' });
    await expectRefused('POST', BASE, { name: 'up', certificate: ca, private_key: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }) }, 409, /served by the inbound listener: a certificate authority cannot replace it/);
    // A service-managed row (as a node's ACME order stores it) is not an upload's to replace.
    const acme = selfSignedPair({ hosts: ['acme.example.net'] });
    await stack.sql.query(`INSERT INTO certificates (name, kind, certificate_pem, private_key_sealed, not_after) VALUES ('acme.example.net', 'acme', $1, 'v1.x.y', now() + interval '30 days')`, [acme.certificate]);
    await expectRefused('POST', BASE, { name: 'acme.example.net', certificate: acme.certificate, private_key: acme.privateKey }, 409, /managed by the service \(acme\)/);
  });
});

describe('list, get, pem', () => {
  test('list and get answer the record; unknown names are 404; the PEM has no key', async () => {
    const list = await call('GET', BASE);
    expect(list.status).toBe(200);
    const names = list.body.certificates.map((c: { name: string }) => c.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['root', 'mx1', 'mx-rsa', 'up', 'chained', 'their-ca']));
    const one = await call('GET', `${BASE}/mx1`);
    expect(one.status).toBe(200);
    expect(one.body.certificate).toEqual(list.body.certificates.find((c: { name: string }) => c.name === 'mx1'));
    expect(Object.keys(one.body.certificate).sort()).toEqual([
      'algorithm', 'assigned_listeners', 'created_at', 'fingerprint_sha256', 'has_chain', 'hosts', 'id', 'is_authority', 'issuer',
      'issuer_subject', 'key_size', 'kind', 'name', 'not_after', 'not_before', 'serial_number', 'subject', 'updated_at',
    ]);
    expect((await call('GET', `${BASE}/nope`)).status).toBe(404);
    expect((await call('GET', `${BASE}/nope/pem`)).status).toBe(404);
    const pem = await stack.call('GET', `${BASE}/mx1/pem`, { token: admin });
    expect(pem.headers.get('content-type')).toBe('application/x-pem-file');
    expect(pem.headers.get('content-disposition')).toBe('attachment; filename="mx1.pem"');
    expect(pem.body).not.toMatch(/PRIVATE KEY/);
    // No credential, no certificate.
    expect((await stack.call('GET', `${BASE}/mx1/pem`)).status).toBe(401);
  });
});

describe('delete', () => {
  test('refused while a listener with TLS on serves it; with TLS off the assignment goes with it', async () => {
    await expectRefused('DELETE', `${BASE}/up`, undefined, 409, /assigned to the inbound listener, which has TLS on/);
    const { rows: [mx1] } = await stack.sql.query(`SELECT id FROM certificates WHERE name = 'mx1'`);
    await stack.sql.query(`INSERT INTO listener_certificates (listener, certificate_id) VALUES ('submission', $1)`, [mx1.id]);
    expect((await call('GET', `${BASE}/mx1`)).body.certificate.assigned_listeners).toEqual(['submission']);
    expect((await call('DELETE', `${BASE}/mx1`)).status).toBe(204);
    expect((await stack.sql.query(`SELECT 1 FROM listener_certificates WHERE listener = 'submission'`)).rowCount).toBe(0);
    expect((await call('GET', `${BASE}/mx1`)).status).toBe(404);
    expect((await call('DELETE', `${BASE}/mx1`)).status).toBe(404);
  });

  test('deleting an authority keeps what it issued, with issuer null', async () => {
    expect((await call('DELETE', `${BASE}/their-ca`)).status).toBe(204);
    const r = await call('GET', `${BASE}/from-their-ca`);
    expect(r.body.certificate).toMatchObject({ kind: 'issued', issuer: null });
  });
});

describe('renewal', () => {
  test('the hourly sweep re-issues an issued certificate near its end in place; uploaded ones are left alone', async () => {
    const made = await call('POST', `${BASE}/generate`, { body: { name: 'renew-me', hosts: ['renew.example.net', '192.0.2.9'], issuer: 'root', validity_days: 90 } });
    expect(made.status).toBe(201);
    await stack.sql.query(`INSERT INTO listener_certificates (listener, certificate_id) VALUES ('submission', $1)`, [made.body.certificate.id]);
    // 80 of its 90 days have passed; the uploaded pair is as close to its end.
    await stack.sql.query(`UPDATE certificates SET not_before = not_before - interval '80 days', not_after = not_after - interval '80 days' WHERE name IN ('renew-me', 'up')`);
    const upBefore = (await call('GET', `${BASE}/up`)).body.certificate;
    expect(await stack.runCron('17 * * * *')).toBe(200);
    const renewed = await eventually(async () => (await call('GET', `${BASE}/renew-me`)).body.certificate,
      (c) => c.fingerprint_sha256 !== made.body.certificate.fingerprint_sha256, 15_000);
    expect(renewed).toMatchObject({ id: made.body.certificate.id, kind: 'issued', issuer: 'root', hosts: ['renew.example.net', '192.0.2.9'], algorithm: 'ecdsa', assigned_listeners: ['submission'] });
    const leaf = new X509Certificate(await pemOf('renew-me'));
    expect(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)).toBe(90 * DAY);
    expect(Date.parse(leaf.validTo)).toBeGreaterThan(Date.now() + 89 * DAY);
    expect(leaf.verify(new X509Certificate(await pemOf('root')).publicKey)).toBe(true);
    expect((await call('GET', `${BASE}/up`)).body.certificate).toEqual(upBefore);
  });
});

describe('every response', () => {
  test('no private key in any response; the writes are in the platform credential\'s security trail', async () => {
    expect(responses.length).toBeGreaterThan(50);
    // Every key the store holds, as the base64 of its PEM, and any PEM key block or sealed value.
    const { rows } = await stack.sql.query(`SELECT name, private_key_sealed FROM certificates WHERE kind <> 'acme'`);
    const keys = await Promise.all(rows.map(async (r) => (await unseal(r.private_key_sealed, stack.encryptionKey, PRIVATE_KEY_CONTEXT)).split('\n')[1]!));
    expect(keys.length).toBeGreaterThan(8);
    for (const body of responses) {
      expect(body).not.toMatch(/PRIVATE KEY-----\s*[A-Za-z0-9+/=]{16}|private_key_sealed|v1\.[A-Za-z0-9+/]{16}\./);
      for (const key of keys) expect(body).not.toContain(key);
    }
    const events = await settledAuditEvents(stack, admin);
    const types = events.filter((e) => e.category === 'security').map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['certificate.authority_generated', 'certificate.generated', 'certificate.uploaded', 'certificate.deleted']));
    // Refused writes are not recorded: one event per successful write.
    expect(types.filter((t) => t === 'certificate.authority_generated')).toHaveLength(3);
  });
});
