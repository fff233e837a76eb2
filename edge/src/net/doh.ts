// A DNS-over-HTTPS client for the JSON API (`application/dns-json`, as served
// by Cloudflare, Google and most DoH resolvers). Workers have no socket-level
// DNS, so every lookup the edge makes (webhook hosts, domain verification)
// goes through here: fetch only, no Node APIs.
import { LruCache } from '@edgemail/shared';

export type DnsType = 'A' | 'AAAA' | 'TXT' | 'MX' | 'CNAME';

/**
 * One answer record in presentation form, as the resolver gives it (`10.0.0.1`,
 * `10 mx.example.com.`, `target.example.net.`), except TXT: its quoted
 * character-strings are joined into one unquoted value.
 */
export interface DnsRecord {
  type: DnsType;
  data: string;
  ttl: number;
}

/**
 * `ok` with no records is NODATA: the name exists but has nothing of that type.
 * `error` means the question went unanswered (timeout, HTTP failure, bad JSON,
 * SERVFAIL…): it says nothing about the name, so callers treat it as transient.
 */
export type DnsAnswer =
  | { status: 'ok'; records: DnsRecord[] }
  | { status: 'nxdomain' }
  | { status: 'error'; problem: string };

export interface ResolveOptions {
  /** The resolver's JSON endpoint (`dns.doh_url`), e.g. https://cloudflare-dns.com/dns-query */
  dohUrl: string;
  /** Bound on the whole exchange, body included. */
  timeoutMs?: number;
  /** For tests and for service bindings; the global fetch otherwise. */
  fetch?: typeof fetch;
  /** Set false to ask the resolver even when a cached answer is fresh. */
  cache?: boolean;
}

export const DNS_TYPE_CODES: Readonly<Record<DnsType, number>> = { A: 1, CNAME: 5, MX: 15, TXT: 16, AAAA: 28 };
export const DEFAULT_DOH_TIMEOUT_MS = 3_000;
/** Longest time an answer is reused, whatever its TTL: verification and webhook checks want fresh data. */
export const MAX_CACHE_TTL_SECONDS = 300;

const RCODE_NAMES: Record<number, string> = { 1: 'FORMERR', 2: 'SERVFAIL', 4: 'NOTIMP', 5: 'REFUSED' };

// Per isolate: one name is often looked up by several requests in a row (a
// burst of deliveries to one webhook), and the resolver is a network hop away.
const cache = new LruCache<string, { answer: DnsAnswer; expiresAt: number }>(1_000);

/**
 * Asks the resolver one question. Never throws: a resolver failure is an
 * `error` answer. CNAMEs are not chased here: a recursive resolver already
 * returns the chain plus the final records, and only records of the asked
 * type are kept (ask for `CNAME` to see the chain itself).
 *
 * @example
 * const a = await resolveDns('example.org', 'A', { dohUrl: settings['dns.doh_url'] });
 * if (a.status === 'ok') a.records.map((r) => r.data); // ['93.184.215.14']
 */
export async function resolveDns(name: string, type: DnsType, opts: ResolveOptions): Promise<DnsAnswer> {
  const key = `${opts.dohUrl} ${type} ${name.toLowerCase().replace(/\.$/, '')}`;
  if (opts.cache !== false) {
    const hit = cache.get(key);
    if (hit && hit.expiresAt > Date.now()) return hit.answer;
    if (hit) cache.delete(key);
  }
  const { answer, ttl } = await ask(name, type, opts);
  const keepFor = Math.min(ttl ?? 0, MAX_CACHE_TTL_SECONDS);
  if (keepFor > 0) cache.set(key, { answer, expiresAt: Date.now() + keepFor * 1000 });
  return answer;
}

/** The answer and how long it may be reused (undefined: not at all). */
async function ask(name: string, type: DnsType, opts: ResolveOptions): Promise<{ answer: DnsAnswer; ttl?: number }> {
  const error = (problem: string) => ({ answer: { status: 'error', problem } as const });
  let url: URL;
  try {
    url = new URL(opts.dohUrl);
  } catch {
    return error(`resolver url ${opts.dohUrl} is not a url`);
  }
  url.searchParams.set('name', name);
  url.searchParams.set('type', type);

  const timeoutMs = opts.timeoutMs ?? DEFAULT_DOH_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  // A local, called bare: workerd throws "Illegal invocation" when the global
  // fetch is called as a method of another object (`opts.fetch(...)`).
  const doFetch = opts.fetch ?? fetch;
  let body: unknown;
  try {
    const res = await doFetch(url.toString(), { headers: { accept: 'application/dns-json' }, signal });
    if (res.status !== 200) {
      await res.body?.cancel();
      return error(`resolver answered http ${res.status}`);
    }
    const text = await res.text();
    try {
      body = JSON.parse(text);
    } catch {
      return error('resolver answer is not json');
    }
  } catch (e) {
    if (signal.aborted) return error(`resolver did not answer within ${timeoutMs} ms`);
    return error(`resolver unreachable: ${e instanceof Error ? e.message : String(e)}`);
  }
  return readAnswer(body, type);
}

type JsonRecord = { type?: unknown; data?: unknown; TTL?: unknown };

function readAnswer(body: unknown, type: DnsType): { answer: DnsAnswer; ttl?: number } {
  if (typeof body !== 'object' || body === null || typeof (body as { Status?: unknown }).Status !== 'number') {
    return { answer: { status: 'error', problem: 'resolver answer has no status' } };
  }
  const { Status: rcode, Answer, Authority } = body as { Status: number; Answer?: unknown; Authority?: unknown };
  // Negative answers may be reused for the SOA's TTL the resolver puts in Authority.
  const negativeTtl = minTtl(Array.isArray(Authority) ? (Authority as JsonRecord[]) : []);
  if (rcode === 3) return { answer: { status: 'nxdomain' }, ttl: negativeTtl };
  if (rcode !== 0) {
    return { answer: { status: 'error', problem: `resolver answered ${RCODE_NAMES[rcode] ?? 'rcode'} (${rcode})` } };
  }
  if (Answer !== undefined && !Array.isArray(Answer)) return { answer: { status: 'error', problem: 'resolver answer is malformed' } };
  const wanted = (Answer ?? []).filter((r: JsonRecord) => r?.type === DNS_TYPE_CODES[type]) as JsonRecord[];
  if (wanted.some((r) => typeof r.data !== 'string')) return { answer: { status: 'error', problem: 'resolver answer is malformed' } };
  const records = wanted.map((r) => ({
    type,
    data: type === 'TXT' ? joinTxt(r.data as string) : (r.data as string),
    ttl: typeof r.TTL === 'number' && r.TTL >= 0 ? r.TTL : 0,
  }));
  return { answer: { status: 'ok', records }, ttl: records.length ? minTtl(wanted) : negativeTtl };
}

/** The smallest TTL among records; undefined when there are none (nothing to go by: no caching). */
function minTtl(records: JsonRecord[]): number | undefined {
  const ttls = records.map((r) => (typeof r?.TTL === 'number' ? r.TTL : 0));
  return ttls.length ? Math.min(...ttls) : undefined;
}

/**
 * TXT data comes as one or more quoted character-strings (`"v=spf1 " "-all"`;
 * long records are split every 255 bytes) with `\"`, `\\` and `\DDD` escapes.
 * Some resolvers send a lone string unquoted: that is taken as it is.
 *
 * @example joinTxt('"v=DKIM1; p=MIIB" "IjAN"') // 'v=DKIM1; p=MIIBIjAN'
 */
export function joinTxt(data: string): string {
  if (!data.startsWith('"')) return data;
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  let quoted = false;
  for (let i = 0; i < data.length; i++) {
    // By code point: a character outside the BMP is two UTF-16 units.
    const c = String.fromCodePoint(data.codePointAt(i)!);
    i += c.length - 1;
    if (c === '"') {
      quoted = !quoted;
    } else if (!quoted) {
      // Whitespace between strings separates them; it is not part of the value.
    } else if (c === '\\' && /^\d{3}$/.test(data.slice(i + 1, i + 4))) {
      bytes.push(Number(data.slice(i + 1, i + 4)) & 0xff);
      i += 3;
    } else if (c === '\\' && i + 1 < data.length) {
      const escaped = String.fromCodePoint(data.codePointAt(i + 1)!);
      bytes.push(...encoder.encode(escaped));
      i += escaped.length;
    } else {
      bytes.push(...encoder.encode(c));
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}
