import { describe, expect, it } from 'vitest';
import { checkWebhookTarget, checkWebhookUrlSyntax } from './public-target.js';

// Literals never reach DNS: a resolver that cannot be reached proves it.
const unreachable = { dohUrl: 'http://127.0.0.1:9/dns-query', allowPrivate: false, timeoutMs: 500 };

describe('checkWebhookUrlSyntax: literal hosts', () => {
  it.each([
    ['http://127.0.0.1/hook', 'host 127.0.0.1 is a private address (loopback)'],
    ['http://0.0.0.0/', 'host 0.0.0.0 is a private address (unspecified)'],
    ['http://10.0.0.5/', 'host 10.0.0.5 is a private address (private)'],
    ['http://172.16.3.4/', 'host 172.16.3.4 is a private address (private)'],
    ['http://172.31.255.255/', 'host 172.31.255.255 is a private address (private)'],
    ['http://192.168.1.1:8080/', 'host 192.168.1.1 is a private address (private)'],
    ['http://169.254.169.254/latest/meta-data/', 'host 169.254.169.254 is a private address (link-local)'],
    ['http://100.64.0.1/', 'host 100.64.0.1 is a private address (cgnat)'],
    ['http://224.0.0.1/', 'host 224.0.0.1 is a private address (multicast)'],
    ['http://255.255.255.255/', 'host 255.255.255.255 is a private address (broadcast)'],
    ['http://192.0.2.10/', 'host 192.0.2.10 is a private address (reserved)'],
    ['http://[::1]/', 'host [::1] is a private address (loopback)'],
    ['http://[::]/', 'host [::] is a private address (unspecified)'],
    ['http://[fc00::1]/', 'host [fc00::1] is a private address (unique local)'],
    ['http://[fd12:3456::1]/', 'host [fd12:3456::1] is a private address (unique local)'],
    ['http://[fe80::1]/', 'host [fe80::1] is a private address (link-local)'],
    ['http://[ff02::1]/', 'host [ff02::1] is a private address (multicast)'],
    // The parser rewrites ::ffff:127.0.0.1 as [::ffff:7f00:1].
    ['http://[::ffff:127.0.0.1]/', 'host [::ffff:7f00:1] is a private address (ipv4-mapped)'],
    ['http://[::ffff:7f00:1]/', 'host [::ffff:7f00:1] is a private address (ipv4-mapped)'],
    ['http://[::ffff:93.184.216.34]/', 'host [::ffff:5db8:d822] is a private address (ipv4-mapped)'],
    ['http://[64:ff9b::7f00:1]/', 'host [64:ff9b::7f00:1] is a private address (nat64)'],
    ['http://[64:ff9b:1::a00:1]/', 'host [64:ff9b:1::a00:1] is a private address (nat64)'],
    ['http://[2002:7f00:1::1]/', 'host [2002:7f00:1::1] is a private address (6to4)'],
    ['http://[2001::1]/', 'host [2001::1] is a private address (teredo)'],
    ['http://[2001:db8::1]/', 'host [2001:db8::1] is a private address (reserved)'],
    ['http://[::127.0.0.1]/', 'host [::7f00:1] is a private address (reserved)'],
  ])('%s is refused', (url, problem) => {
    expect(checkWebhookUrlSyntax(url, false)).toEqual({ ok: false, problem });
  });

  it.each([
    ['http://2130706433/', 'host 2130706433 is written as an integer; write the address as dotted decimal'],
    ['http://0x7f000001/', 'host 0x7f000001 is written as a hex integer; write the address as dotted decimal'],
    ['http://017700000001/', 'host 017700000001 is written as an octal integer; write the address as dotted decimal'],
    ['http://0x7f.1/', 'host 0x7f.1 is written with hex parts; write the address as dotted decimal'],
    ['http://0177.0.0.1/', 'host 0177.0.0.1 is written with octal parts; write the address as dotted decimal'],
    ['http://127.1/', 'host 127.1 is written in shortened form; write the address as dotted decimal'],
    ['http://127.0.0.1./', 'host 127.0.0.1. is written in a non-canonical form; write the address as dotted decimal'],
    ['http://%31%32%37.0.0.1/', 'host %31%32%37.0.0.1 is written in a non-canonical form; write the address as dotted decimal'],
    // Public or not, an integer-written host is refused: it exists to slip past filters.
    ['https://1572395042/', 'host 1572395042 is written as an integer; write the address as dotted decimal'],
    // The parser also reads hosts after a backslash or without slashes.
    ['http:\\\\2130706433\\x', 'host 2130706433 is written as an integer; write the address as dotted decimal'],
    ['http:2130706433/x', 'host 2130706433 is written as an integer; write the address as dotted decimal'],
    ['http://2130706433:8080/x', 'host 2130706433 is written as an integer; write the address as dotted decimal'],
  ])('%s is refused for its form', (url, problem) => {
    expect(checkWebhookUrlSyntax(url, false)).toEqual({ ok: false, problem });
  });

  it.each([
    ['ftp://example.org/hook', 'scheme must be http or https'],
    ['javascript:alert(1)', 'scheme must be http or https'],
    ['file:///etc/passwd', 'scheme must be http or https'],
    [`https://example.org/${'a'.repeat(2049 - 'https://example.org/'.length)}`, 'must be at most 2048 characters'],
    ['https://user:pass@example.org/', 'must not contain a user name or password'],
    ['https://user@example.org/', 'must not contain a user name or password'],
    ['http://localhost/', 'host localhost is a loopback name'],
    ['http://LOCALHOST.:8080/', 'host localhost is a loopback name'],
    ['http://foo.localhost/', 'host foo.localhost is a loopback name'],
    ['example.org/hook', 'must be an absolute http or https url'],
    ['http://exa\tmple.org/', 'must not contain spaces or control characters'],
    [' https://example.org/', 'must not contain spaces or control characters'],
  ])('%s is refused', (url, problem) => {
    expect(checkWebhookUrlSyntax(url, false)).toEqual({ ok: false, problem });
  });

  it.each([
    'http://93.184.216.34/hook',
    'https://[2606:4700::1111]/hook',
    'https://[2606:4700:4700::1111]:8443/x?y=1#z',
    'https://example.org/hook',
    'https://Example.ORG./hook',
    `https://example.org/${'a'.repeat(2048 - 'https://example.org/'.length)}`,
  ])('%s passes', (url) => {
    expect(checkWebhookUrlSyntax(url, false)).toEqual({ ok: true });
  });

  it('allowPrivate keeps scheme, length and credential checks and drops the rest', () => {
    for (const url of ['http://127.0.0.1/', 'http://[::1]/', 'http://localhost:3000/', 'http://2130706433/', 'http://10.0.0.5/']) {
      expect(checkWebhookUrlSyntax(url, true)).toEqual({ ok: true });
    }
    expect(checkWebhookUrlSyntax('ftp://127.0.0.1/', true)).toEqual({ ok: false, problem: 'scheme must be http or https' });
    expect(checkWebhookUrlSyntax('http://a:b@127.0.0.1/', true)).toEqual({ ok: false, problem: 'must not contain a user name or password' });
    expect(checkWebhookUrlSyntax(`http://127.0.0.1/${'a'.repeat(2048)}`, true)).toEqual({ ok: false, problem: 'must be at most 2048 characters' });
  });
});

describe('checkWebhookTarget with literal hosts', () => {
  it('decides without asking the resolver', async () => {
    expect(await checkWebhookTarget('http://93.184.216.34/', unreachable)).toEqual({ ok: true });
    expect(await checkWebhookTarget('https://[2606:4700::1111]/', unreachable)).toEqual({ ok: true });
    expect(await checkWebhookTarget('http://169.254.169.254/', unreachable))
      .toEqual({ ok: false, problem: 'host 169.254.169.254 is a private address (link-local)' });
    expect(await checkWebhookTarget('http://localhost/', { ...unreachable, allowPrivate: true })).toEqual({ ok: true });
  });

  it('a name with an unreachable resolver is a transient failure', async () => {
    const verdict = await checkWebhookTarget('https://example.org/', unreachable);
    expect(verdict).toMatchObject({ ok: false, transient: true });
    expect(verdict.ok === false && verdict.problem).toMatch(/^could not resolve example\.org: resolver unreachable/);
  });
});

