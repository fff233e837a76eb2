// The local stack has no Internet and no public DNS, so nothing could ever
// verify a domain. This small DNS-over-HTTPS resolver (the JSON API the edge's
// `dns.doh_url` speaks) answers for the locally registered domains with the
// very records the API tells their owner to publish, read from the database at
// each query: in `pnpm dev` a domain verifies as soon as it exists. Every other
// name is NXDOMAIN. Like the Neon bridge it serves loopback only and refuses
// browser requests (a foreign Host or any Origin).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { foreignReason } from './loopback-guard.js';
import { expectedRecords, publicHost } from '../src/services/domains/dns-records.js';

export interface DevDns {
  /** The resolver URL, for `SERVICE_DNS_DOH_URL`. */
  url: string;
  close(): Promise<void>;
}

const TYPE_CODES = { TXT: 16, MX: 15 } as const;

/** A TXT value as resolvers give it: quoted strings of at most 255 characters. */
const quotedTxt = (value: string) => (value.match(/.{1,255}/g) ?? ['']).map((part) => `"${part.replace(/["\\]/g, '\\$&')}"`).join(' ');

/** The registered domain a query name belongs to: the name itself, or under `_dmarc.` / `<selector>._domainkey.`. */
function candidateDomains(name: string): string[] {
  const dkim = /^[^.]+\._domainkey\.(.+)$/.exec(name);
  const dmarc = /^_dmarc\.(.+)$/.exec(name);
  return [name, ...(dkim ? [dkim[1]!] : []), ...(dmarc ? [dmarc[1]!] : [])];
}

export async function startDevDns(opts: { databaseUrl: string; publicUrl: string; port?: number; log?: (line: string) => void }): Promise<DevDns> {
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 2 });
  // Ctrl-C reaches PostgreSQL too (one process group): an idle connection it
  // closes is not a crash. A query on a broken one answers SERVFAIL.
  pool.on('error', () => {});
  const host = publicHost({ 'server.public_url': opts.publicUrl });

  async function answer(name: string, type: string) {
    const { rows } = await pool.query(
      'SELECT name, dkim_selector, dkim_algorithm, dkim_public_key FROM domains WHERE name = ANY($1)',
      [candidateDomains(name)],
    );
    const records = rows.flatMap((r) => expectedRecords(
      { name: r.name, dkimSelector: r.dkim_selector, dkimAlgorithm: r.dkim_algorithm, dkimPublicKey: r.dkim_public_key }, host,
    )).filter((r) => r.name === name);
    if (!records.length) return { Status: 3, Answer: [] };
    const code = TYPE_CODES[type as keyof typeof TYPE_CODES];
    return {
      Status: 0,
      Answer: records.filter((r) => r.type === type).map((r) => ({
        name: `${name}.`, type: code, TTL: 0, data: r.type === 'TXT' ? quotedTxt(r.value) : `${r.value}.`,
      })),
    };
  }

  let port = 0;
  const server: Server = createServer((req, res) => {
    const refuse = (status: number, why: string) => { opts.log?.(`dev-dns: refused ${why}`); res.writeHead(status).end(); };
    const foreign = foreignReason(req, port);
    if (foreign) return refuse(403, foreign);
    const url = new URL(req.url ?? '/', 'http://local');
    const name = (url.searchParams.get('name') ?? '').toLowerCase().replace(/\.$/, '');
    const type = (url.searchParams.get('type') ?? '').toUpperCase();
    if (url.pathname !== '/dns-query' || !name) return refuse(400, `query ${req.url}`);
    answer(name, type).then(
      (body) => res.writeHead(200, { 'content-type': 'application/dns-json' }).end(JSON.stringify(body)),
      () => res.writeHead(200, { 'content-type': 'application/dns-json' }).end(JSON.stringify({ Status: 2 })),
    );
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/dns-query`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}
