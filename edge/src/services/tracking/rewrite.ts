// Rewriting one recipient's HTML for tracking (docs/tracking.md, "What is
// rewritten"), when its job is built at the claim: before the relay node
// composes and DKIM-signs the message, so the signature covers the HTML as
// delivered. The plain-text part is never touched.
//
// Only `href` of `<a>` and `<area>` is rewritten, and only when it is an
// absolute http(s) URL; `mailto:`, `tel:`, `#anchors`, relative links,
// links to the service's own host (its unsubscribe pages), links whose URL
// mentions "unsubscribe", and links marked `data-track="off"` stay as they are.
import { isTrackableUrl, MAX_TRACKED_URL, signToken, type TrackingClaim } from './token.js';
import type { Config } from '@edgemail/shared';

export interface TrackingOptions {
  opens: boolean;
  clicks: boolean;
  /** Where tracked URLs point: `https://links.acme.test` or the service's own public URL, without a trailing slash. */
  base: string;
}

type Settings = Pick<Config, 'database.crypto.encryption_key' | 'server.public_url'>;

// An <a> or <area> start tag (attributes may hold `>` only inside quotes).
const LINK_TAG = /<(a|area)(\s(?:[^>"']|"[^"]*"|'[^']*')*)>/gi;
// One href attribute inside such a tag: double-quoted, single-quoted or bare.
const HREF = /(\shref\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/i;
const NO_TRACK = /\sdata-track\s*=\s*(?:"off"|'off'|off)(?=[\s/]|$)/i;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** An attribute value as the browser reads it: character references decoded (the common forms). */
function decodeAttribute(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);?/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/** The normalised URL a link points to, when it is one to track; null to leave the link alone. */
export function trackableHref(rawValue: string, ownHost: string): string | null {
  const value = decodeAttribute(rawValue).trim();
  if (!/^https?:/i.test(value) || value.length > MAX_TRACKED_URL) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.host.toLowerCase() === ownHost || /unsubscribe/i.test(url.href)) return null;
  return isTrackableUrl(url.href) ? url.href : null;
}

/**
 * The HTML with every trackable link pointing at `<base>/t/c/<token>` and,
 * when opens are tracked, a 1×1 pixel `<base>/t/o/<token>` before the last
 * `</body>` (or at the end). Tokens carry the email id, the link's index
 * among the rewritten links and its URL, signed (token.ts).
 */
export async function trackHtml(settings: Settings, html: string, emailId: string, options: TrackingOptions, issuedAt = Math.floor(Date.now() / 1000)): Promise<string> {
  const ownHost = new URL(settings['server.public_url']).host.toLowerCase();
  let out = html;
  if (options.clicks) {
    const links: { start: number; end: number; replacement: Promise<string> }[] = [];
    let index = 0;
    for (const match of html.matchAll(LINK_TAG)) {
      const attributes = match[2]!;
      if (NO_TRACK.test(attributes)) continue;
      const href = HREF.exec(attributes);
      if (!href) continue;
      const url = trackableHref(href[2] ?? href[3] ?? href[4] ?? '', ownHost);
      if (url === null) continue;
      const claim: TrackingClaim = { kind: 'click', emailId, issuedAt, linkIndex: index++, url };
      const start = match.index! + 1 + match[1]!.length + href.index;
      const prefix = href[1]!;
      links.push({
        start, end: start + href[0].length,
        replacement: signToken(settings, claim).then((token) => `${prefix}"${options.base}/t/c/${token}"`),
      });
      if (index > 0xffff) break;
    }
    const replaced = await Promise.all(links.map((l) => l.replacement));
    let rebuilt = '';
    let at = 0;
    links.forEach((l, i) => {
      rebuilt += html.slice(at, l.start) + replaced[i];
      at = l.end;
    });
    out = rebuilt + html.slice(at);
  }
  if (options.opens) {
    const token = await signToken(settings, { kind: 'open', emailId, issuedAt, linkIndex: 0, url: '' });
    const pixel = `<img src="${options.base}/t/o/${token}" width="1" height="1" alt="" border="0" style="height:1px;width:1px;border:0;margin:0;padding:0">`;
    const close = out.toLowerCase().lastIndexOf('</body>');
    out = close === -1 ? out + pixel : out.slice(0, close) + pixel + out.slice(close);
  }
  return out;
}
