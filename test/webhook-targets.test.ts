// Webhook target checks against a real DoH JSON responder over real HTTP:
// the edge's resolver client, its reading of answers and the private-address
// verdicts together, as they run before a webhook is created or delivered.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resolveDns } from '../edge/src/net/doh.js';
import { checkWebhookTarget } from '../edge/src/net/public-target.js';
import { startDohResponder, type DohResponder } from './support/doh-responder.js';

let doh: DohResponder;
const check = (url: string, allowPrivate = false) => checkWebhookTarget(url, { dohUrl: doh.url, allowPrivate, timeoutMs: 1_000 });

beforeAll(async () => {
  doh = await startDohResponder();
});
afterAll(async () => {
  await doh.close();
});
beforeEach(() => {
  doh.clear();
});

describe('checkWebhookTarget', () => {
  it('accepts a name whose every address is public, asking A and AAAA', async () => {
    doh.set('hooks.example', 'A', ['93.184.216.34', '104.16.0.1']);
    doh.set('hooks.example', 'AAAA', ['2606:4700::1111']);
    expect(await check('https://hooks.example/in')).toEqual({ ok: true, addresses: ['93.184.216.34', '104.16.0.1', '2606:4700::1111'] });
    expect(doh.queries().sort((a, b) => a.type.localeCompare(b.type)))
      .toEqual([{ name: 'hooks.example', type: 'A' }, { name: 'hooks.example', type: 'AAAA' }]);
  });

  it('accepts a name with IPv6 only, or reached through a CNAME', async () => {
    doh.set('v6.example', 'AAAA', ['2a00:1450:4001::200e']);
    expect(await check('https://v6.example/')).toEqual({ ok: true, addresses: ['2a00:1450:4001::200e'] });
    doh.set('alias.example', 'CNAME', ['target.example']);
    doh.set('target.example', 'A', ['93.184.216.34']);
    expect(await check('https://alias.example/')).toEqual({ ok: true, addresses: ['93.184.216.34'] });
  });

  it.each([
    ['A', '10.1.2.3', 'private'],
    ['A', '169.254.169.254', 'link-local'],
    ['A', '100.64.7.7', 'cgnat'],
    ['A', '127.0.0.1', 'loopback'],
    ['AAAA', '::1', 'loopback'],
    ['AAAA', 'fd00::1', 'unique local'],
    ['AAAA', 'fe80::1', 'link-local'],
    ['AAAA', '::ffff:10.0.0.1', 'ipv4-mapped'],
    ['AAAA', '64:ff9b::a00:1', 'nat64'],
  ] as const)('refuses a name resolving to %s %s', async (type, address, range) => {
    doh.set('inside.example', type, [address]);
    expect(await check('https://inside.example/hook')).toEqual({
      ok: false,
      problem: `inside.example resolves to ${address}, a private address (${range})`,
    });
  });

  it('refuses a name with one public and one private address', async () => {
    doh.set('mixed.example', 'A', ['93.184.216.34', '192.168.0.10']);
    expect(await check('https://mixed.example/')).toEqual({ ok: false, problem: 'mixed.example resolves to 192.168.0.10, a private address (private)' });
    doh.set('mixed6.example', 'A', ['93.184.216.34']);
    doh.set('mixed6.example', 'AAAA', ['::1']);
    expect(await check('https://mixed6.example/')).toEqual({ ok: false, problem: 'mixed6.example resolves to ::1, a private address (loopback)' });
  });

  it('refuses a private address behind a CNAME', async () => {
    doh.set('public-looking.example', 'CNAME', ['metadata.internal']);
    doh.set('metadata.internal', 'A', ['169.254.169.254']);
    expect(await check('https://public-looking.example/'))
      .toEqual({ ok: false, problem: 'public-looking.example resolves to 169.254.169.254, a private address (link-local)' });
  });

  it('refuses a name that does not exist or has no address', async () => {
    doh.set('gone.example', 'A', 'nxdomain');
    expect(await check('https://gone.example/')).toEqual({ ok: false, problem: 'host gone.example does not resolve' });
    expect(await check('https://never-set.example/')).toEqual({ ok: false, problem: 'host never-set.example does not resolve' });
    doh.set('mail-only.example', 'MX', ['10 mx.example.']);
    expect(await check('https://mail-only.example/')).toEqual({ ok: false, problem: 'host mail-only.example does not resolve' });
  });

  it('is transient when the resolver fails, in whichever way', async () => {
    doh.set('hooks.example', 'A', ['93.184.216.34']);
    doh.setDown(true);
    expect(await check('https://hooks.example/')).toEqual({
      ok: false, transient: true, problem: 'could not resolve hooks.example: resolver answered http 503',
    });
    doh.setDown(false);
    for (const [mode, problem] of [
      ['http-500', 'resolver answered http 500'],
      ['servfail', 'resolver answered SERVFAIL (2)'],
      ['bad-json', 'resolver answer is not json'],
      ['hang', 'resolver did not answer within 1000 ms'],
    ] as const) {
      doh.failNext(2, mode);
      expect(await check('https://hooks.example/'), mode).toEqual({ ok: false, transient: true, problem: `could not resolve hooks.example: ${problem}` });
    }
    expect(await check('https://hooks.example/')).toEqual({ ok: true, addresses: ['93.184.216.34'] });
  });

  it('a private address found is a verdict even when the other lookup failed', async () => {
    doh.set('half.example', 'A', ['10.0.0.1']);
    doh.set('half.example', 'AAAA', ['fd00::1']);
    doh.failNext(1, 'http-500'); // whichever of the two parallel questions comes first
    const verdict = await check('https://half.example/');
    expect(verdict).toEqual({ ok: false, problem: expect.stringMatching(/^half\.example resolves to (10\.0\.0\.1|fd00::1), a private address/) });
    expect(doh.queries()).toHaveLength(2);
  });

  it('with allowPrivate, asks no question at all', async () => {
    doh.set('inside.example', 'A', ['10.0.0.1']);
    expect(await check('http://inside.example:8080/hook', true)).toEqual({ ok: true });
    expect(await check('http://never-set.example/', true)).toEqual({ ok: true });
    expect(await check('ftp://inside.example/', true)).toEqual({ ok: false, problem: 'scheme must be http or https' });
    expect(doh.queries()).toEqual([]);
  });

  it('looks up a host written in upper case or with a trailing dot by its name', async () => {
    doh.set('hooks.example', 'A', ['10.9.9.9']);
    expect(await check('https://HOOKS.Example./x')).toEqual({ ok: false, problem: 'hooks.example resolves to 10.9.9.9, a private address (private)' });
  });
});

describe('resolveDns over HTTP', () => {
  it('reads TXT, MX and CNAME as the responder sends them', async () => {
    const dkim = `v=DKIM1; k=rsa; p=${'A'.repeat(400)}`;
    doh.set('sel._domainkey.example', 'TXT', [dkim, 'say "hi"']);
    doh.set('example.test', 'MX', ['10 mx1.example.test.', '20 mx2.example.test.']);
    doh.set('www.example.test', 'CNAME', ['example.test']);
    expect(await resolveDns('sel._domainkey.example', 'TXT', { dohUrl: doh.url })).toEqual({ status: 'ok', records: [
      { type: 'TXT', data: dkim, ttl: 0 },
      { type: 'TXT', data: 'say "hi"', ttl: 0 },
    ] });
    expect(await resolveDns('example.test', 'MX', { dohUrl: doh.url })).toMatchObject({ status: 'ok', records: [
      { type: 'MX', data: '10 mx1.example.test.' },
      { type: 'MX', data: '20 mx2.example.test.' },
    ] });
    expect(await resolveDns('www.example.test', 'CNAME', { dohUrl: doh.url }))
      .toEqual({ status: 'ok', records: [{ type: 'CNAME', data: 'example.test.', ttl: 0 }] });
    expect(await resolveDns('nothing.example.test', 'TXT', { dohUrl: doh.url })).toEqual({ status: 'nxdomain' });
  });

  it('reuses an answer for its TTL', async () => {
    doh.set('cached.example', 'A', ['93.184.216.34'], 60);
    await resolveDns('cached.example', 'A', { dohUrl: doh.url });
    await resolveDns('cached.example', 'A', { dohUrl: doh.url });
    expect(doh.queries()).toEqual([{ name: 'cached.example', type: 'A' }]);
  });
});
