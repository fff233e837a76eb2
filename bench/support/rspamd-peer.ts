// The rspamd row of `pnpm bench inbound` (issue 32): the node's accept-and-
// spool path in a process of its own (haraka-node-ingest.ts) with spam
// scoring on, each message streamed to a real rspamd (test/support/rspamd.ts:
// one scanning worker, hyperscan off, no DNS, redis or network modules), as a
// node with `relay_node.inbound.spam.rspamd_url` does. Its CPU per message is
// the node process's plus rspamd's own (every rspamd process, from /proc);
// `printRspamd` splits the two and sets the row beside the node without rspamd.
import { rspamdBinary, rspamdCpuSeconds, startRspamd } from '../../test/support/rspamd.js';
import { startNodeIngestProcess } from './haraka-node-ingest.js';
import { NODE_PROCESS, type PeerRow } from './haraka-report.js';
import { f0, f1 } from './smtp-report.js';

export const RSPAMD_PEER = 'node process + rspamd';

/** CPU ms of each measured run (the bench reads cpuMs() before and after each): the node's, rspamd's. */
const runs: { nodeMs: number; rspamdMs: number }[] = [];

export async function startNodeIngestWithRspamd(o: { domain: string; dnsServer: string }) {
  if (!rspamdBinary) return { unavailable: 'rspamd is not installed (apt-get install rspamd)' };
  const rspamd = await startRspamd().catch((e: unknown) => ({ error: e instanceof Error ? e.message : String(e) }));
  if ('error' in rspamd) return { unavailable: `rspamd did not start: ${rspamd.error}` };
  const node = await startNodeIngestProcess({ ...o, rspamdUrl: rspamd.url });
  if ('unavailable' in node) {
    await rspamd.dispose();
    return node;
  }
  let before: { nodeMs: number; rspamdMs: number } | null = null;
  return {
    port: node.port,
    to: node.to,
    cpuMs: () => {
      const now = { nodeMs: node.cpuMs(), rspamdMs: rspamdCpuSeconds(rspamd.pid) * 1000 };
      if (before) {
        runs.push({ nodeMs: now.nodeMs - before.nodeMs, rspamdMs: now.rspamdMs - before.rspamdMs });
        before = null;
      } else before = now;
      return now.nodeMs + now.rspamdMs;
    },
    stop: async () => {
      await node.stop();
      await rspamd.dispose();
    },
  };
}

/** The rspamd rows beside the node process without rspamd: messages a second, and CPU per message split. */
export function printRspamd(rows: PeerRow[]): void {
  const ours = rows.filter((r) => r.target === RSPAMD_PEER && r.load && !r.greetingDelayMs);
  if (!ours.length) return;
  console.log(`spam scoring (issue 32): the node process with each message also scored by rspamd (${RSPAMD_PEER}) beside it without (${NODE_PROCESS})`);
  console.log('clients  pattern   plain msg/s  rspamd msg/s  ratio  plain CPU ms/msg  node CPU ms/msg  rspamd CPU ms/msg  total CPU ms/msg');
  ours.forEach((row, i) => {
    const plain = rows.find((r) => r.target === NODE_PROCESS && r.clients === row.clients && r.pattern === row.pattern && !r.greetingDelayMs && r.load);
    const run = runs[i];
    const accepted = row.load!.accepted;
    const split = run && accepted ? { node: run.nodeMs / accepted, rspamd: run.rspamdMs / accepted } : undefined;
    const ratio = plain?.load?.perSecond ? row.load!.perSecond / plain.load.perSecond : undefined;
    console.log([
      String(row.clients).padEnd(7), row.pattern.padEnd(8), f0(plain?.load?.perSecond).padStart(11), f0(row.load!.perSecond).padStart(13),
      (ratio === undefined ? '-' : ratio.toFixed(2)).padStart(6), f1(plain?.cpuMsPerMessage).padStart(17), f1(split?.node).padStart(16),
      f1(split?.rspamd).padStart(18), f1(row.cpuMsPerMessage).padStart(17),
    ].join('  '));
  });
  console.log('rspamd: one scanning worker, hyperscan off, its DNS, redis and network modules off (test/support/rspamd.ts); its CPU is every rspamd process\'s, from /proc.');
}
