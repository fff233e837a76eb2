// A small DNS-over-HTTPS JSON responder on 127.0.0.1, for tests of the edge's
// lookups (webhook targets, domain verification) without the public internet.
// It speaks the protocol the real resolvers speak: GET ?name=&type= with
// `accept: application/dns-json`, numeric record types, quoted TXT strings,
// the CNAME chain followed into Answer, Status 3 for unknown names.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export type RecordType = 'A' | 'AAAA' | 'TXT' | 'MX' | 'CNAME';

/** How a failing query fails: HTTP 500, a SERVFAIL answer, a body that is not JSON, or no answer at all. */
export type FailureMode = 'http-500' | 'servfail' | 'bad-json' | 'hang';

export interface DohResponder {
  /** The full endpoint to use as `SERVICE_DNS_DOH_URL` / `dohUrl`. */
  url: string;
  /** Sets the records of one name and type; `'nxdomain'` makes the whole name not exist. TXT values unquoted. */
  set(name: string, type: RecordType, values: string[] | 'nxdomain', ttl?: number): void;
  /** Forgets every record and pending failure, and the query log. */
  clear(): void;
  /** Every question received, in order (failed ones included). */
  queries(): { name: string; type: string }[];
  /** The next `n` queries fail the given way. */
  failNext(n?: number, mode?: FailureMode): void;
  /** While down, every query answers HTTP 503. */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

const TYPE_CODES: Record<RecordType, number> = { A: 1, CNAME: 5, MX: 15, TXT: 16, AAAA: 28 };
const TYPE_NAMES = Object.fromEntries(Object.entries(TYPE_CODES).map(([k, v]) => [String(v), k])) as Record<string, RecordType>;

const normalize = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * @example
 * const doh = await startDohResponder();
 * doh.set('hooks.example', 'A', ['10.0.0.1']);
 * await resolveDns('hooks.example', 'A', { dohUrl: doh.url });
 */
export async function startDohResponder(): Promise<DohResponder> {
  const records = new Map<string, Map<RecordType, { values: string[]; ttl: number }>>();
  const missing = new Set<string>();
  const log: { name: string; type: string }[] = [];
  let failures: FailureMode[] = [];
  let down = false;

  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const query = new URL(req.url ?? '/', 'http://responder');
    const name = normalize(query.searchParams.get('name') ?? '');
    const typeParam = (query.searchParams.get('type') ?? 'A').toUpperCase();
    const type = TYPE_NAMES[typeParam] ?? (typeParam as RecordType);
    log.push({ name, type });

    const send = (status: number, body: string, contentType = 'application/dns-json') => {
      res.writeHead(status, { 'content-type': contentType }).end(body);
    };
    // Cloudflare refuses a JSON query that does not ask for JSON.
    if (req.headers.accept !== 'application/dns-json' && query.searchParams.get('ct') !== 'application/dns-json') {
      return send(400, 'expected accept: application/dns-json', 'text/plain');
    }
    if (query.pathname !== '/dns-query') return send(404, 'not found', 'text/plain');
    if (down) return send(503, 'resolver down', 'text/plain');
    const failure = failures.shift();
    if (failure === 'hang') return; // closed by the client's timeout or by close()
    if (failure === 'http-500') return send(500, 'internal error', 'text/plain');
    if (failure === 'bad-json') return send(200, '<html>not json</html>');
    if (!name || !(type in TYPE_CODES)) return send(400, 'bad question', 'text/plain');

    const question = [{ name: `${name}.`, type: TYPE_CODES[type] }];
    if (failure === 'servfail') return send(200, JSON.stringify({ Status: 2, Question: question }));
    const { status, chain } = lookUp(name, type);
    send(200, JSON.stringify({ Status: status, TC: false, RD: true, RA: true, AD: false, CD: false, Question: question, ...(chain.length ? { Answer: chain } : {}) }));
  };

  /** Follows CNAMEs (as a recursive resolver does) and returns the chain plus the final records. */
  const lookUp = (name: string, type: RecordType) => {
    const chain: { name: string; type: number; TTL: number; data: string }[] = [];
    let current = name;
    for (let hop = 0; hop < 8; hop++) {
      if (missing.has(current)) return { status: hop === 0 ? 3 : 0, chain };
      const byType = records.get(current);
      if (!byType) return { status: hop === 0 ? 3 : 0, chain };
      const alias = byType.get('CNAME');
      if (alias && type !== 'CNAME') {
        chain.push({ name: `${current}.`, type: TYPE_CODES.CNAME, TTL: alias.ttl, data: `${normalize(alias.values[0]!)}.` });
        current = normalize(alias.values[0]!);
        continue;
      }
      const set = byType.get(type);
      for (const value of set?.values ?? []) {
        chain.push({ name: `${current}.`, type: TYPE_CODES[type], TTL: set!.ttl, data: presentation(type, value) });
      }
      return { status: 0, chain };
    }
    return { status: 2, chain: [] };
  };

  const server = createServer((req, res) => {
    try {
      answer(req, res);
    } catch (e) {
      res.writeHead(500).end(String(e));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };

  return {
    url: `http://127.0.0.1:${port}/dns-query`,
    set(name, type, values, ttl = 0) {
      const key = normalize(name);
      if (values === 'nxdomain') {
        records.delete(key);
        missing.add(key);
        return;
      }
      missing.delete(key);
      const byType = records.get(key) ?? new Map();
      byType.set(type, { values, ttl });
      records.set(key, byType);
    },
    clear() {
      records.clear();
      missing.clear();
      log.length = 0;
      failures = [];
      down = false;
    },
    queries: () => [...log],
    failNext(n = 1, mode = 'http-500') {
      failures.push(...Array<FailureMode>(n).fill(mode));
    },
    setDown(value) {
      down = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A value as resolvers present it: TXT quoted, a CNAME target fully qualified (trailing dot). */
function presentation(type: RecordType, value: string): string {
  if (type === 'TXT') return quoteTxt(value);
  if (type === 'CNAME') return `${normalize(value)}.`;
  return value;
}

/**
 * Presentation form of a TXT value: quoted, `"` and `\` escaped, and split
 * into 255-character strings as long values (DKIM keys) are on the wire.
 */
function quoteTxt(value: string): string {
  const pieces = value.match(/[\s\S]{1,255}/g) ?? [''];
  return pieces.map((p) => `"${p.replace(/[\\"]/g, '\\$&')}"`).join(' ');
}
