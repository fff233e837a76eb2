// A diagnostic target of `pnpm bench inbound`: the relay node's ingest path
// without the edge. The real inbound listener (smtp-server, the node's hooks,
// the bare-line-ending normaliser, SPF/DKIM/DMARC against the bench's DNS
// server) writing to the real durable spool (fsync of file and directory
// before the 250), with a fixed recipient domain instead of asking the edge
// and nothing forwarding. It bounds what the end-to-end figure can reach, and
// it runs in this process, as a node would run alone.
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createAuthenticator, createDnsResolver } from '../../relay-node/src/inbound/mail-auth/index.js';
import { createInboundServer } from '../../relay-node/src/inbound/listener/index.js';
import type { InboundEnvelope } from '../../relay-node/src/inbound/listener/index.js';
import { createLineEndingNormalizer } from '../../relay-node/src/inbound/hygiene/index.js';
import { openSpool } from '../../relay-node/src/spool/index.js';
import { createRspamdClient, withSpamCheck } from '../../relay-node/src/inbound/spam/index.js';
import { cleanups } from './stack.js';

export interface RunningIngest {
  port: number;
  stop(): Promise<void>;
}

let instances = 0;

/** `rspamdUrl`: each message is also scored by rspamd, as a node with `relay_node.inbound.spam.rspamd_url` does (bench/support/rspamd-peer.ts). */
export async function startNodeIngest(o: { domain: string; dnsServer: string; greetingDelayMs: number; rspamdUrl?: string }): Promise<RunningIngest> {
  const dir = `/var/tmp/edgemail-ingest-${process.pid}-${instances++}`;
  rmSync(dir, { recursive: true, force: true });
  const spool = await openSpool<Omit<InboundEnvelope, 'authentication'> & { auth: unknown }>(dir);
  const server = createInboundServer(
    {
      recipientDomainAccepted: async (domain) => domain === o.domain,
      store: async (message, { authentication, ...envelope }) => {
        // The spool awaits the verdicts once the body is on disk, as the store contract asks.
        await spool.write(message, authentication.then((a) => ({ ...envelope, auth: a.auth })));
      },
      authenticate: withRspamd(o.rspamdUrl, createAuthenticator({ resolver: createDnsResolver([o.dnsServer], { timeoutMs: 1000, tries: 1 }), mta: 'mx.bench.test' })),
      // Refusals reach the load client as SMTP replies; the log adds nothing the report needs.
      log: { info: () => {}, warn: () => {}, error: () => {} },
      transforms: () => [createLineEndingNormalizer('normalize')],
    },
    {
      name: 'mx.bench.test',
      maxMessageSize: 26_214_400,
      maxHeaderSize: 262_144,
      ratePerMinute: 0,
      greetingDelayMs: o.greetingDelayMs,
      maxSessions: 1000,
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await spool.close();
    rmSync(dir, { recursive: true, force: true });
  };
  cleanups.add(stop);
  return { port, stop: async () => { await stop(); cleanups.delete(stop); } };
}

/** The verdict function with rspamd's score added when `url` is given; rspamd failing is said once on stderr. */
function withRspamd(url: string | undefined, authenticate: ReturnType<typeof createAuthenticator>): ReturnType<typeof createAuthenticator> {
  if (!url) return authenticate;
  const say = (message: string, fields?: Record<string, unknown>) => console.error(`  node ingest: ${message} ${JSON.stringify(fields ?? {})}`);
  return withSpamCheck(authenticate, { check: createRspamdClient({ url, timeoutMs: 5000 }), rejectScore: () => null, log: { info: say, warn: say, error: say }, url });
}
