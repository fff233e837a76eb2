import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { x509 } from '../../crypto/x509.js';
import { inspectPair } from './inspect.js';

const hasOpenssl = existsSync('/usr/bin/openssl') || existsSync('/usr/local/bin/openssl');

type Kind = { type: 'rsa'; bits: number } | { type: 'ec'; curve: string } | { type: 'ed25519' };

function keyPair(kind: Kind): { privateKey: KeyObject; publicKey: KeyObject } {
  if (kind.type === 'rsa') return generateKeyPairSync('rsa', { modulusLength: kind.bits });
  if (kind.type === 'ec') return generateKeyPairSync('ec', { namedCurve: kind.curve });
  return generateKeyPairSync('ed25519');
}

function signParams(kind: Kind): Algorithm | RsaHashedImportParams | EcKeyImportParams {
  if (kind.type === 'rsa') return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as RsaHashedImportParams;
  if (kind.type === 'ec') return { name: 'ECDSA', namedCurve: kind.curve, hash: 'SHA-256' } as EcKeyImportParams;
  return { name: 'Ed25519' };
}

interface Made { certificate: string; key: KeyObject; cert: x509.X509Certificate }

/** A certificate for `subjectKey` signed by `issuer` (or itself), made by @peculiar/x509 from node:crypto keys. */
async function makeCertificate(kind: Kind, opts: { cn: string; ca?: boolean; issuer?: Made; issuerKind?: Kind; hosts?: string[] }): Promise<Made> {
  const pair = keyPair(kind);
  const spki = pair.publicKey.export({ type: 'spki', format: 'der' });
  const signer = opts.issuer?.key ?? pair.privateKey;
  const signerKind = opts.issuerKind ?? kind;
  const signingKey = await crypto.subtle.importKey('pkcs8', signer.export({ type: 'pkcs8', format: 'der' }), signParams(signerKind), false, ['sign']);
  const cert = await x509.X509CertificateGenerator.create({
    subject: [{ CN: [opts.cn] }],
    issuer: opts.issuer ? opts.issuer.cert.subjectName : [{ CN: [opts.cn] }],
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 30 * 86_400_000),
    publicKey: new Uint8Array(spki),
    signingKey,
    signingAlgorithm: signParams(signerKind),
    extensions: [
      new x509.BasicConstraintsExtension(!!opts.ca, opts.ca ? 0 : undefined, true),
      ...(opts.hosts ? [new x509.SubjectAlternativeNameExtension(opts.hosts.map((h) => ({ type: /^[\d.]+$|:/.test(h) ? 'ip' as const : 'dns' as const, value: h })))] : []),
    ],
  });
  return { certificate: `${cert.toString('pem')}\n`, key: pair.privateKey, cert };
}

const pkcs8 = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' }) as string;

describe('inspectPair', () => {
  test('reads an ECDSA P-256 pair: metadata as node:crypto sees it, key as PKCS#8', async () => {
    const made = await makeCertificate({ type: 'ec', curve: 'P-256' }, { cn: 'mx.example.net', hosts: ['mx.example.net', '192.0.2.7', '2001:db8::1'] });
    const result = await inspectPair({ certificate: made.certificate, privateKey: pkcs8(made.key) });
    if (!result.ok) throw new Error(JSON.stringify(result.fields));
    const node = new X509Certificate(made.certificate);
    expect(result.meta).toMatchObject({
      subject: 'CN=mx.example.net', issuerSubject: 'CN=mx.example.net',
      hosts: ['mx.example.net', '192.0.2.7', '2001:db8::1'],
      algorithm: 'ecdsa', keySize: 256, isAuthority: false,
      serialNumber: node.serialNumber.toLowerCase(),
      fingerprintSha256: node.fingerprint256.replace(/:/g, '').toLowerCase(),
    });
    expect(result.meta.notAfter.getTime()).toBe(new Date(node.validTo).getTime());
    expect(result.privateKeyPkcs8Pem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(result.chainPem).toBe('');
    expect(new X509Certificate(result.certificatePem).fingerprint256).toBe(node.fingerprint256);
  });

  test('accepts PKCS#1 and SEC1 keys, wrapping them into PKCS#8; P-384; Ed25519; reads an authority and its pathlen', async () => {
    const rsa = await makeCertificate({ type: 'rsa', bits: 2048 }, { cn: 'rsa.test' });
    const pkcs1 = rsa.key.export({ type: 'pkcs1', format: 'pem' }) as string;
    expect(pkcs1).toMatch(/BEGIN RSA PRIVATE KEY/);
    const r = await inspectPair({ certificate: rsa.certificate, privateKey: pkcs1 });
    expect(r.ok && r.meta).toMatchObject({ algorithm: 'rsa', keySize: 2048 });
    // The wrapped key is the same key, in node:crypto's eyes too.
    expect(r.ok && (await import('node:crypto')).createPrivateKey(r.privateKeyPkcs8Pem).export({ type: 'pkcs1', format: 'pem' })).toBe(pkcs1);

    const ec = await makeCertificate({ type: 'ec', curve: 'P-384' }, { cn: 'ec.test', ca: true });
    const sec1 = ec.key.export({ type: 'sec1', format: 'pem' }) as string;
    expect(sec1).toMatch(/BEGIN EC PRIVATE KEY/);
    const e = await inspectPair({ certificate: ec.certificate, privateKey: sec1 });
    expect(e.ok && e.meta).toMatchObject({ algorithm: 'ecdsa', keySize: 384, isAuthority: true, pathLength: 0 });

    const ed = await makeCertificate({ type: 'ed25519' }, { cn: 'ed.test' });
    const d = await inspectPair({ certificate: ed.certificate, privateKey: pkcs8(ed.key) });
    expect(d.ok && d.meta).toMatchObject({ algorithm: 'ed25519', keySize: 256 });
  });

  test('refuses garbage, a missing certificate, two certificates, a key in the certificate field', async () => {
    const made = await makeCertificate({ type: 'ec', curve: 'P-256' }, { cn: 'a.test' });
    const other = await makeCertificate({ type: 'ec', curve: 'P-256' }, { cn: 'b.test' });
    const key = pkcs8(made.key);
    const cases: Array<[string, RegExp]> = [
      ['not a certificate at all', /is not a PEM certificate/],
      ['', /is not a PEM certificate/],
      ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', /is not a readable X\.509 certificate/],
      [made.certificate + other.certificate, /holds 2 certificates: .*intermediates in chain/],
      [key, /holds a PEM PRIVATE KEY, not a certificate/],
    ];
    for (const [certificate, problem] of cases) {
      const result = await inspectPair({ certificate, privateKey: key });
      expect(result.ok, certificate).toBe(false);
      if (!result.ok) expect(result.fields.certificate).toMatch(problem);
    }
  });

  test('refuses encrypted, unreadable, missing and mismatched keys, naming private_key', async () => {
    const made = await makeCertificate({ type: 'ec', curve: 'P-256' }, { cn: 'a.test' });
    const encrypted = made.key.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string;
    const legacy = made.key.export({ type: 'sec1', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string;
    expect(legacy).toMatch(/Proc-Type: 4,ENCRYPTED/);
    const otherEc = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const otherRsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const cases: Array<[string, RegExp]> = [
      [encrypted, /is encrypted/],
      [legacy, /is encrypted/],
      ['garbage', /is not a PEM private key/],
      ['-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', /is not a readable private key/],
      [made.certificate, /holds a PEM CERTIFICATE, not a private key/],
      [pkcs8(otherEc), /does not match the certificate/],
      [pkcs8(otherRsa), /does not match the certificate/],
      [pkcs8(made.key) + pkcs8(otherEc), /holds 2 private keys/],
    ];
    for (const [privateKey, problem] of cases) {
      const result = await inspectPair({ certificate: made.certificate, privateKey });
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.fields.private_key, privateKey.slice(0, 40)).toMatch(problem);
    }
  });

  test('refuses RSA under 2048 bits and curves other than P-256 and P-384', async () => {
    const small = await makeCertificate({ type: 'rsa', bits: 1024 }, { cn: 'small.test' });
    const r = await inspectPair({ certificate: small.certificate, privateKey: pkcs8(small.key) });
    expect(r.ok ? null : r.fields.certificate).toMatch(/RSA key of 1024 bits: at least 2048/);
    const p521 = await makeCertificate({ type: 'ec', curve: 'P-521' }, { cn: 'p521.test' });
    const e = await inspectPair({ certificate: p521.certificate, privateKey: pkcs8(p521.key) });
    expect(e.ok ? null : e.fields.certificate).toMatch(/unsupported curve \(P-521\): use P-256 or P-384/);
  });

  test('checks the chain: the first certificate signed the leaf, each next signed the one before', async () => {
    const root = await makeCertificate({ type: 'ec', curve: 'P-256' }, { cn: 'Root', ca: true });
    const intermediate = await makeCertificate({ type: 'ec', curve: 'P-256' }, { cn: 'Intermediate', ca: true, issuer: root });
    const leaf = await makeCertificate({ type: 'rsa', bits: 2048 }, { cn: 'leaf.test', issuer: intermediate, issuerKind: { type: 'ec', curve: 'P-256' } });
    const stranger = await makeCertificate({ type: 'ec', curve: 'P-256' }, { cn: 'Stranger', ca: true });
    const key = pkcs8(leaf.key);
    const ok = await inspectPair({ certificate: leaf.certificate, privateKey: key, chain: intermediate.certificate + root.certificate });
    if (!ok.ok) throw new Error(JSON.stringify(ok.fields));
    expect(ok.meta.issuerSubject).toBe('CN=Intermediate');
    expect(ok.chainPem.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);

    const wrongFirst = await inspectPair({ certificate: leaf.certificate, privateKey: key, chain: root.certificate });
    expect(wrongFirst.ok ? null : wrongFirst.fields.chain).toMatch(/first certificate \(CN=Root\) did not sign the certificate/);
    const brokenLink = await inspectPair({ certificate: leaf.certificate, privateKey: key, chain: intermediate.certificate + stranger.certificate });
    expect(brokenLink.ok ? null : brokenLink.fields.chain).toMatch(/certificate 2 \(CN=Stranger\) did not sign certificate 1/);
    const notCerts = await inspectPair({ certificate: leaf.certificate, privateKey: key, chain: key });
    expect(notCerts.ok ? null : notCerts.fields.chain).toMatch(/only intermediate certificates belong in chain/);
  });

  test.skipIf(!hasOpenssl)('reads what openssl writes: ecparam -genkey (EC PARAMETERS + SEC1), genrsa (PKCS#8), req -x509', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inspect-'));
    const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    run('ecparam', '-name', 'prime256v1', '-genkey', '-out', 'ec.key');
    expect(readFileSync(join(dir, 'ec.key'), 'utf8')).toMatch(/BEGIN EC PARAMETERS[\s\S]*BEGIN EC PRIVATE KEY/);
    run('req', '-x509', '-key', 'ec.key', '-subj', '/CN=openssl.test', '-addext', 'subjectAltName=DNS:openssl.test,IP:192.0.2.1', '-days', '30', '-out', 'ec.crt');
    const ec = await inspectPair({ certificate: readFileSync(join(dir, 'ec.crt'), 'utf8'), privateKey: readFileSync(join(dir, 'ec.key'), 'utf8') });
    if (!ec.ok) throw new Error(JSON.stringify(ec.fields));
    expect(ec.meta).toMatchObject({ hosts: ['openssl.test', '192.0.2.1'], algorithm: 'ecdsa', keySize: 256, isAuthority: true });

    run('genrsa', '-out', 'rsa.key', '1024');
    run('req', '-x509', '-key', 'rsa.key', '-subj', '/CN=small.test', '-days', '30', '-out', 'rsa.crt');
    const small = await inspectPair({ certificate: readFileSync(join(dir, 'rsa.crt'), 'utf8'), privateKey: readFileSync(join(dir, 'rsa.key'), 'utf8') });
    expect(small.ok ? null : small.fields.certificate).toMatch(/1024 bits/);

    run('genrsa', '-traditional', '-out', 'rsa2.key', '2048');
    run('req', '-x509', '-key', 'rsa2.key', '-subj', '/CN=rsa.test', '-days', '30', '-out', 'rsa2.crt');
    const rsa = await inspectPair({ certificate: readFileSync(join(dir, 'rsa2.crt'), 'utf8'), privateKey: readFileSync(join(dir, 'rsa2.key'), 'utf8') });
    expect(rsa.ok && rsa.meta).toMatchObject({ algorithm: 'rsa', keySize: 2048 });
  });
});
