// Entry of `pnpm bench tls`'s listener process: the relay node's TLS
// (createListenerTls, polling the real edge's certificate bundle) behind two
// inbound listeners built alike (createInboundServer, the node's settings),
// which differ only in how a handshake finds its certificate: `resolving`
// takes the node's per-handshake choice (SNICallback: the spec's order),
// `static` has one context and no callback (resolution bypassed). Both in one
// process, so a round against either runs on the same CPU, heap and
// certificate. Reports the two ports over IPC; `cpu` answers its CPU time so
// far; `stop` ends it.
import { loadConfig } from '@edgemail/shared';
import type { SecureContext } from 'node:tls';

interface Log { info(m: string, f?: Record<string, unknown>): void; warn(m: string, f?: Record<string, unknown>): void; error(m: string, f?: Record<string, unknown>): void }
interface Presented { secureContext: SecureContext; SNICallback: (name: string, cb: (err: Error | null, ctx?: SecureContext) => void) => void }
interface Server { listen(port: number, host: string, cb: () => void): void; server: { address(): { port: number } }; close(cb: () => void): void; secureContext: Map<string, SecureContext> }

// Loaded at run time, not named to the compiler: the node is typechecked by its own package (as smtp-relay-node-child.ts).
const url = (path: string) => new URL(`../../relay-node/src/${path}`, import.meta.url).href;

export interface TlsListenerChildStart {
  edgeUrl: string;
  /** The node credential (`myr_…`) of an installation-wide node. */
  token: string;
  settings: Record<string, string>;
}

export type TlsListenerChildMessage = { resolving: number; static: number; presents: unknown } | { error: string } | { cpu: NodeJS.CpuUsage };

const send = (m: TlsListenerChildMessage) => { if (process.connected) process.send!(m); };
const said = new Set<string>();
const say = (level: string) => (message: string) => {
  if (said.has(message)) return;
  said.add(message);
  console.error(`  listener ${level}: ${message} (repeats not shown)`);
};
const log: Log = { info: () => {}, warn: say('warn'), error: say('error') };

process.once('message', (start: TlsListenerChildStart) => {
  (async () => {
    const { createEdgeClient } = await import(url('edge/client.ts'));
    const { createListenerTls } = await import(url('tls/listener-tls.ts'));
    const { createInboundServer } = await import(url('inbound/listener/inbound-server.ts'));
    const { inboundOptionsFromConfig } = await import(url('inbound/listener/inbound-options.ts'));
    const config = loadConfig(start.settings).config;
    const tls = createListenerTls({
      edge: createEdgeClient({ url: start.edgeUrl, token: start.token }),
      publicUrl: config['server.public_url'],
      acme: { enabled: config['acme.enabled'], hosts: config['acme.hosts'] },
      log,
    });
    await tls.start();
    // The handshake never gets past STARTTLS: what comes after is not called.
    const deps = { recipientDomainAccepted: async () => false, store: null, authenticate: null, log };
    const options = { ...inboundOptionsFromConfig(config, 'relay_node.inbound'), name: 'mx.bench.test', ratePerMinute: 0, closeTimeoutMs: 1000 };
    const presented: Presented = tls.forListener('inbound');
    const open = async (tlsOption: Partial<Presented>): Promise<Server> => {
      const server: Server = createInboundServer(deps, { ...options, tls: tlsOption });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    };
    const resolving = await open(presented);
    tls.attach('inbound', resolving);
    const fixed = await open({ secureContext: presented.secureContext });
    send({ resolving: resolving.server.address().port, static: fixed.server.address().port, presents: tls.presented('inbound') });
    process.on('message', (m) => {
      // This process's CPU time so far: per handshake, it does not depend on how busy the machine is.
      if (m === 'cpu') send({ cpu: process.cpuUsage() });
      if (m !== 'stop') return;
      tls.stop();
      let open = 2;
      for (const s of [resolving, fixed]) s.close(() => { if (--open === 0) process.exit(0); });
      setTimeout(() => process.exit(0), 2000).unref();
    });
    process.once('disconnect', () => process.exit(0));
  })().catch((err: unknown) => {
    send({ error: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  });
});
