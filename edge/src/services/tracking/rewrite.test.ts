import { describe, expect, test } from 'vitest';
import { trackHtml, trackableHref } from './rewrite.js';
import { signToken, verifyToken } from './token.js';
import { classify, userAgentClass } from './classify.js';

const settings = { 'database.crypto.encryption_key': Buffer.alloc(32, 7).toString('base64'), 'server.public_url': 'https://mail.example.com' };
const other = { ...settings, 'database.crypto.encryption_key': Buffer.alloc(32, 8).toString('base64') };
const EMAIL = '0b6f3c1e-2a4d-4c8e-9f00-1234567890ab';
const base = 'https://mail.example.com';

describe('trackableHref', () => {
  test.each([
    ['https://a.example/x?y=1&amp;z=2', 'https://a.example/x?y=1&z=2'],
    ['  HTTP://A.Example/p q ', 'http://a.example/p%20q'],
    ['https&#58;//a.example/', 'https://a.example/'],
  ])('%j is tracked as %j', (raw, url) => expect(trackableHref(raw, 'mail.example.com')).toBe(url));

  test.each(['mailto:a@b.example', 'tel:+1555', '#top', '/relative', 'javascript:alert(1)', 'https://mail.example.com/unsub',
    'https://a.example/Unsubscribe?x', 'ftp://a.example/', 'https://', `https://a.example/${'x'.repeat(2100)}`].map((raw) => [raw.slice(0, 40), raw]))('%j is left alone', (_label, raw) => {
    expect(trackableHref(raw, 'mail.example.com')).toBeNull();
  });
});

describe('trackHtml', () => {
  test('rewrites a and area hrefs in their quoting, keeps the rest byte for byte, and puts the pixel before </body>', async () => {
    const html = '<html><BODY><A HREF="https://a.example/1">1</A><area shape=rect href=\'https://b.example/2\'>'
      + '<a title="x>y" href=https://c.example/3>3</a><link href="https://css.example/s.css"><a href="mailto:x@y.example">m</a>'
      + '<a data-track="off" href="https://d.example/">d</a></BODY></html>';
    const out = await trackHtml(settings, html, EMAIL, { opens: true, clicks: true, base }, 1_800_000_000);
    const links = [...out.matchAll(/href="(https:\/\/mail\.example\.com\/t\/c\/[^"]+)"/gi)].map((m) => m[1]!);
    expect(links).toHaveLength(3);
    const claims = await Promise.all(links.map((l) => verifyToken(settings, 'click', l.split('/').pop()!)));
    expect(claims.map((c) => [c?.linkIndex, c?.url, c?.emailId, c?.issuedAt])).toEqual([
      [0, 'https://a.example/1', EMAIL, 1_800_000_000], [1, 'https://b.example/2', EMAIL, 1_800_000_000], [2, 'https://c.example/3', EMAIL, 1_800_000_000],
    ]);
    expect(out).toContain('<link href="https://css.example/s.css">');
    expect(out).toContain('<a href="mailto:x@y.example">m</a>');
    expect(out).toContain('<a data-track="off" href="https://d.example/">d</a>');
    expect(out).toContain('<a title="x>y" href="https://mail.example.com/t/c/');
    expect(out).toMatch(/<img src="https:\/\/mail\.example\.com\/t\/o\/[^"]+" width="1" height="1"[^>]*><\/BODY><\/html>$/);
    const pixel = /\/t\/o\/([^"]+)"/.exec(out)![1]!;
    expect(await verifyToken(settings, 'open', pixel)).toMatchObject({ kind: 'open', emailId: EMAIL });
  });

  test('opens only: links untouched, pixel at the end without a body; clicks only: no pixel', async () => {
    const html = '<p><a href="https://a.example/">a</a></p>';
    expect(await trackHtml(settings, html, EMAIL, { opens: true, clicks: false, base })).toMatch(/^<p><a href="https:\/\/a\.example\/">a<\/a><\/p><img src=/);
    expect(await trackHtml(settings, html, EMAIL, { opens: false, clicks: true, base })).not.toContain('<img');
  });
});

describe('tokens', () => {
  test('another installation\'s key, another kind, or any changed character is refused', async () => {
    const token = await signToken(settings, { kind: 'click', emailId: EMAIL, issuedAt: 1, linkIndex: 4, url: 'https://a.example/' });
    expect(await verifyToken(settings, 'click', token)).toEqual({ kind: 'click', emailId: EMAIL, issuedAt: 1, linkIndex: 4, url: 'https://a.example/' });
    expect(await verifyToken(other, 'click', token)).toBeNull();
    expect(await verifyToken(settings, 'open', token)).toBeNull();
    for (let i = 0; i < token.length; i++) {
      if (token[i] === '.') continue;
      const changed = token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
      expect(await verifyToken(settings, 'click', changed), `position ${i}`).toBeNull();
    }
  });
});

describe('classify', () => {
  test.each([
    [{ method: 'HEAD', userAgent: 'Mozilla/5.0 (Windows NT 10.0) Chrome/131.0 Safari/537.36' }, 'head_request'],
    [{ userAgent: undefined }, 'no_user_agent'],
    [{ userAgent: 'Mozilla/5.0' }, 'apple_privacy_proxy'],
    [{ userAgent: 'Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko)', clientIp: '17.58.1.2' }, 'apple_privacy_proxy'],
    [{ userAgent: 'Mozilla/5.0 (compatible; Barracuda Sentinel)' }, 'security_scanner'],
    [{ userAgent: 'curl/8.5.0' }, 'bot'],
    [{ userAgent: 'Mozilla/5.0 (Windows NT 10.0) Chrome/131.0 Safari/537.36', secondsSinceIssue: 3 }, 'too_soon_after_delivery'],
    [{ userAgent: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)' }, null],
    [{ userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1' }, null],
  ])('%j → %j', (request, reason) => {
    const verdict = classify({ method: 'GET', userAgent: undefined, clientIp: '198.51.100.7', secondsSinceIssue: 3600, ...request }, 10);
    expect(verdict.reason).toBe(reason);
    expect(verdict.machine).toBe(reason !== null);
  });

  test('classes', () => {
    expect(userAgentClass('Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko)')).toBe('mail_client');
    expect(userAgentClass('Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0)')).toBe('mail_client');
    expect(userAgentClass('Mozilla/5.0 (Linux; Android 14) Chrome/131.0 Mobile Safari/537.36')).toBe('mobile_browser');
    expect(userAgentClass('YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html')).toBe('mail_proxy');
    expect(userAgentClass('something else')).toBe('unknown');
  });
});
