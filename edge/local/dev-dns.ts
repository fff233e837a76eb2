// The local stack has no Internet and no public DNS, so nothing could ever
// verify a domain. This small DNS-over-HTTPS resolver (the JSON API the edge's
// `dns.doh_url` speaks) answers for the locally registered domains with the
// very records the API tells their owner to publish, read from the database at
// each query: in `pnpm dev` a domain verifies as soon as it exists. Every other
// name is NXDOMAIN. Like the Neon bridge it serves loopback only and refuses
// browser requests (a foreign Host or any Origin).
//
// The same answers are served as ordinary DNS (UDP and TCP, `dnsPort`), so the
// relay node's SPF/DKIM/DMARC checks (`dns.servers`), dig and opendkim see the
// records domain verification saw (docs/local-stack.md, "The local DNS").
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket } from 'dns-packet';
import pg from 'pg';
import { foreignReason } from './loopback-guard.js';
import { expectedRecords, publicHost } from '../src/services/domains/dns-records.js';

export interface DevDns {
  /** The resolver URL, for `SERVICE_DNS_DOH_URL`. */
  url: string;
  /** `127.0.0.1:<port>` of the ordinary DNS server (for `SERVICE_DNS_SERVERS`), when one was asked for. */
  address?: string;
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

export async function startDevDns(opts: {
  databaseUrl: string; publicUrl: string; port?: number;
  /** Also answer ordinary DNS (UDP and TCP) on this loopback port; 0 picks a free one. */
  dnsPort?: number;
  log?: (line: string) => void;
}): Promise<DevDns> {
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 2 });
  // Ctrl-C reaches PostgreSQL too (one process group): an idle connection it
  // closes is not a crash. A query on a broken one answers SERVFAIL.
  pool.on('error', () => {});
  const host = publicHost({ 'server.public_url': opts.publicUrl });

  /** The records of `name` (any type); null when no registered domain has that name. */
  async function lookup(name: string) {
    const { rows } = await pool.query(
      'SELECT name, dkim_selector, dkim_algorithm, dkim_public_key FROM domains WHERE name = ANY($1)',
      [candidateDomains(name)],
    );
    const records = rows.flatMap((r) => expectedRecords(
      { name: r.name, dkimSelector: r.dkim_selector, dkimAlgorithm: r.dkim_algorithm, dkimPublicKey: r.dkim_public_key }, host,
    )).filter((r) => r.name === name);
    return records.length ? records : null;
  }

  async function answer(name: string, type: string) {
    const records = await lookup(name);
    if (!records) return { Status: 3, Answer: [] };
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', resolve);
  });
  port = (server.address() as AddressInfo).port;
  let plain: PlainDns | undefined;
  try {
    if (opts.dnsPort !== undefined) plain = await servePlainDns(opts.dnsPort, lookup);
  } catch (e) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await pool.end();
    throw e;
  }
  return {
    url: `http://127.0.0.1:${port}/dns-query`,
    ...(plain ? { address: `127.0.0.1:${plain.port}` } : {}),
    async close() {
      await plain?.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

type Lookup = (name: string) => Promise<{ type: 'TXT' | 'MX'; value: string }[] | null>;
interface PlainDns { port: number; close(): Promise<void> }

// Loopback clients only; without EDNS a UDP answer holds 512 bytes (RFC 1035), above it the client retries over TCP.
const CLASSIC_UDP_LIMIT = 512;
const rcodes = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;

/** Ordinary DNS on 127.0.0.1:`port`, UDP and TCP (one port, as resolvers expect), answering from `lookup`. */
async function servePlainDns(port: number, lookup: Lookup): Promise<PlainDns> {
  const udp: UdpSocket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(port, '127.0.0.1', () => resolve());
  });
  const bound = udp.address().port;
  const tcp: TcpServer = createTcpServer();
  const sockets = new Set<Socket>();
  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(bound, '127.0.0.1', () => resolve());
    });
  } catch (e) {
    udp.close();
    throw e;
  }
  udp.on('error', () => {});
  udp.on('message', (message, peer) => {
    const query = decodeQuery(message);
    if (!query) return;
    void respond(query, lookup).then((response) => {
      let bytes = dnsPacket.encode(response);
      const opt = query.additionals?.find((a) => a.type === 'OPT') as { udpPayloadSize?: number } | undefined;
      if (bytes.length > Math.max(CLASSIC_UDP_LIMIT, opt?.udpPayloadSize ?? 0)) {
        bytes = dnsPacket.encode({ ...response, answers: [], flags: (response.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE });
      }
      udp.send(bytes, peer.port, peer.address);
    });
  });
  tcp.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      // Each message is preceded by its two-byte length (RFC 1035 4.2.2).
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const query = decodeQuery(pending.subarray(2, 2 + pending.readUInt16BE(0)));
        pending = pending.subarray(2 + pending.readUInt16BE(0));
        if (!query) return socket.destroy();
        void respond(query, lookup).then((response) => { if (!socket.destroyed) socket.write(dnsPacket.streamEncode(response)); });
      }
    });
  });
  return {
    port: bound,
    close: () => new Promise<void>((resolve) => {
      udp.close();
      for (const socket of sockets) socket.destroy();
      tcp.close(() => resolve());
    }),
  };
}

function decodeQuery(message: Buffer): DecodedPacket | null {
  try {
    const packet = dnsPacket.decode(message);
    return packet.type === 'query' && packet.questions?.length ? packet : null;
  } catch {
    return null;
  }
}

/** The answer to the first question: the name's records of the asked type; NXDOMAIN for a name we do not serve. */
async function respond(query: DecodedPacket, lookup: Lookup): Promise<dnsPacket.Packet> {
  const question = query.questions![0]!;
  const base = { type: 'response' as const, id: query.id ?? 0, questions: query.questions };
  const flags = (rcode: number) => dnsPacket.AUTHORITATIVE_ANSWER | ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | rcode;
  let records: Awaited<ReturnType<Lookup>>;
  try {
    records = await lookup(question.name.toLowerCase().replace(/\.$/, ''));
  } catch {
    return { ...base, flags: flags(rcodes.SERVFAIL), answers: [] };
  }
  if (!records) return { ...base, flags: flags(rcodes.NXDOMAIN), answers: [] };
  const answers: Answer[] = records.filter((r) => r.type === question.type).map((r) => {
    const common = { name: question.name, ttl: 0, class: 'IN' as const };
    if (r.type === 'TXT') return { ...common, type: 'TXT' as const, data: txtStrings(r.value) };
    const [preference, exchange] = r.value.split(/\s+/);
    return { ...common, type: 'MX' as const, data: { preference: Number(preference), exchange: exchange! } };
  });
  return { ...base, flags: flags(rcodes.NOERROR), answers };
}

/** A TXT record is a list of strings of at most 255 bytes each; readers join them. */
function txtStrings(text: string): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255));
  return out.length ? out : [Buffer.alloc(0)];
}
