// The relay node's ingest path (support/smtp-node-ingest.ts: the real
// listener, SPF/DKIM/DMARC in its verification workers, the fsynced spool,
// nothing forwarding) in a process of its own, for the comparison with
// Haraka in `pnpm bench inbound`: both accept and keep (the node spools,
// Haraka discards), both ask the bench's DNS server, and each one's CPU is
// its own process's, every thread, read from /proc around the run.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cleanups } from './stack.js';

const CHILD = 'BENCH_NODE_INGEST_CHILD';

export interface NodeIngestProcess {
  port: number;
  to: string;
  cpuMs(): number;
  stop(): Promise<void>;
}

/** Starts the node's ingest path in a child process; `{unavailable}` when it did not come up. */
export async function startNodeIngestProcess(o: { domain: string; dnsServer: string; rspamdUrl?: string }): Promise<NodeIngestProcess | { unavailable: string }> {
  const child = fork(new URL(import.meta.url), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [CHILD]: JSON.stringify(o) },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      if (child.connected) child.send('stop');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };
  cleanups.add(stop);
  const first = await new Promise<{ port?: number; error?: string }>((resolve) => {
    child.once('message', (m: { port?: number; error?: string }) => resolve(m));
    void exited.then(() => resolve({ error: 'its process exited before listening' }));
  });
  if (first.port === undefined) {
    await stop();
    cleanups.delete(stop);
    return { unavailable: `node ingest process: ${first.error}` };
  }
  const pid = child.pid!;
  return {
    port: first.port,
    to: `bench@${o.domain}`,
    cpuMs: () => {
      // utime + stime (fields 14 and 15) of the whole process, every thread; USER_HZ is 100.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    stop: async () => { await stop(); cleanups.delete(stop); },
  };
}

if (process.env[CHILD] && process.send) {
  const o = JSON.parse(process.env[CHILD]) as { domain: string; dnsServer: string; rspamdUrl?: string };
  const { startNodeIngest } = await import('./smtp-node-ingest.js');
  try {
    const ingest = await startNodeIngest({ domain: o.domain, dnsServer: o.dnsServer, greetingDelayMs: 0, rspamdUrl: o.rspamdUrl });
    process.send({ port: ingest.port });
    const stop = () => void ingest.stop().finally(() => process.exit(0));
    process.on('message', (m) => { if (m === 'stop') stop(); });
    process.once('disconnect', stop);
  } catch (e) {
    process.send({ error: e instanceof Error ? e.message : String(e) });
    process.exit(1);
  }
}
