// An authoritative DNS server for tests, over UDP and TCP on one port, built
// on dns-packet so that `pnpm test` needs nothing but Node.js and npm.
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { createServer, type Server, type Socket as TcpSocket } from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type Question } from 'dns-packet';

/** The records of one name; TXT strings longer than 255 bytes are split as DNS requires. */
export interface DnsRecordSet {
  TXT?: string[];
  A?: string[];
  AAAA?: string[];
  MX?: { preference: number; exchange: string }[];
}

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as `dns.servers` / `Resolver.setServers` take it. */
  readonly address: string;
  readonly port: number;
  /** Replaces (or with `undefined`, removes) the records of `name`. */
  set(name: string, records: DnsRecordSet | undefined): void;
  /** Questions answered so far, by transport. */
  readonly queries: { udp: number; tcp: number };
  close(): Promise<void>;
}

// Without EDNS a UDP answer may hold 512 bytes (RFC 1035); above it the client is told to retry over TCP.
const CLASSIC_UDP_LIMIT = 512;
const TTL = 60;

/**
 * Serves `records` (names case-insensitive, no trailing dot) on 127.0.0.1.
 * Unknown names answer NXDOMAIN; known names without the asked type answer
 * NOERROR with no records, as a real authoritative server does.
 *
 * @example
 * const dns = await startDnsServer({ 'example.test': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] } });
 * const resolver = createDnsResolver([dns.address]);
 */
export async function startDnsServer(records: Record<string, DnsRecordSet> = {}): Promise<TestDnsServer> {
  const zone = new Map(Object.entries(records).map(([name, set]) => [normalise(name), set]));
  const queries = { udp: 0, tcp: 0 };
  const { udp, tcp, port } = await bindBoth();

  udp.on('message', (message: Buffer, peer: RemoteInfo) => {
    const query = decode(message);
    if (!query) return;
    queries.udp++;
    const limit = ednsLimit(query);
    let response = dnsPacket.encode(answer(zone, query));
    if (response.length > limit) response = dnsPacket.encode({ ...answer(zone, query), answers: [], flags: flagsOf(query, 0) | dnsPacket.TRUNCATED_RESPONSE });
    udp.send(response, peer.port, peer.address);
  });
  tcp.on('connection', (socket: TcpSocket) => serveTcp(socket, zone, queries));

  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    set(name, set) {
      if (set) zone.set(normalise(name), set);
      else zone.delete(normalise(name));
    },
    close: () => new Promise<void>((resolve) => {
      udp.close();
      tcp.close(() => resolve());
    }),
  };
}

/** A free UDP port whose TCP twin is free too (a resolver retries truncated answers over TCP on the same port). */
async function bindBoth(): Promise<{ udp: Socket; tcp: Server; port: number }> {
  for (let attempt = 0; ; attempt++) {
    const udp = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, '127.0.0.1', () => resolve());
    });
    const port = udp.address().port;
    try {
      return { udp, tcp: await listenTcp(port), port };
    } catch (err) {
      udp.close();
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 20) throw err;
    }
  }
}

function listenTcp(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** DNS over TCP: each message is preceded by its two-byte length (RFC 1035 section 4.2.2). */
function serveTcp(socket: TcpSocket, zone: Map<string, DnsRecordSet>, queries: { tcp: number }): void {
  let pending = Buffer.alloc(0);
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
      const length = pending.readUInt16BE(0);
      const query = decode(pending.subarray(2, 2 + length));
      pending = pending.subarray(2 + length);
      if (!query) return socket.destroy();
      queries.tcp++;
      socket.write(dnsPacket.streamEncode(answer(zone, query)));
    }
  });
}

function decode(message: Buffer): DecodedPacket | null {
  try {
    const packet = dnsPacket.decode(message);
    return packet.type === 'query' && packet.questions?.length ? packet : null;
  } catch {
    return null;
  }
}

function ednsLimit(query: DecodedPacket): number {
  const opt = query.additionals?.find((a) => a.type === 'OPT') as { udpPayloadSize?: number } | undefined;
  return Math.max(CLASSIC_UDP_LIMIT, opt?.udpPayloadSize ?? CLASSIC_UDP_LIMIT);
}

const NOERROR = 0;
const NXDOMAIN = 3;

function flagsOf(query: DecodedPacket, rcode: number): number {
  return dnsPacket.AUTHORITATIVE_ANSWER | ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | rcode;
}

function answer(zone: Map<string, DnsRecordSet>, query: DecodedPacket): dnsPacket.Packet {
  const questions = query.questions ?? [];
  const question = questions[0] as Question;
  const name = normalise(question.name);
  const set = zone.get(name);
  return {
    type: 'response',
    id: query.id ?? 0,
    flags: flagsOf(query, set ? NOERROR : NXDOMAIN),
    questions,
    answers: set ? recordsOf(question, set) : [],
  };
}

function recordsOf(question: Question, set: DnsRecordSet): Answer[] {
  const base = { name: question.name, ttl: TTL, class: 'IN' as const };
  switch (question.type) {
    case 'TXT':
      return (set.TXT ?? []).map((text) => ({ ...base, type: 'TXT' as const, data: chunks(text) }));
    case 'A':
      return (set.A ?? []).map((data) => ({ ...base, type: 'A' as const, data }));
    case 'AAAA':
      return (set.AAAA ?? []).map((data) => ({ ...base, type: 'AAAA' as const, data }));
    case 'MX':
      return (set.MX ?? []).map((data) => ({ ...base, type: 'MX' as const, data }));
    default:
      return [];
  }
}

/** A TXT record is a list of strings of at most 255 bytes each; readers join them. */
function chunks(text: string): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255));
  return out.length ? out : [Buffer.alloc(0)];
}

function normalise(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
