// Issue 31 §2's table in `pnpm bench inbound`: the relay node beside the
// same-runtime peer (Haraka), per clients × pattern cell of one run. The
// node's CPU per message ÷ the peer's (goal ≤ 1), the node's accepted msg/s
// ÷ the peer's (goal ≥ 1), and the pipeline's stored msg/s ÷ Postfix →
// Maildir (goal ≥ 0.5), with the edge's CPU per message apart: in production
// the node's CPU is the operator's, the edge's scales out.
import { EDGEMAIL, f0, f1, MAILDIR, type Row } from './smtp-report.js';

export const HARAKA = 'Haraka (spf, dkim, dmarc → discard)';
/** The node's ingest path (listener, checks, fsynced spool; nothing forwarding) in a process of its own: support/haraka-node-ingest.ts. */
export const NODE_PROCESS = 'node ingest, own process';

/** A row with its target's own process CPU per accepted message (a peer's, read from /proc around the run). */
export type PeerRow = Row & { cpuMsPerMessage?: number };

export const GOAL_CPU = 1;
export const GOAL_RATE = 1;
export const GOAL_STORED_MAILDIR = 0.5;

export type PeerVerdicts = Record<string, {
  peer: string;
  nodeCpuMsPerMessage?: number; peerCpuMsPerMessage?: number; edgeCpuMsPerMessage?: number;
  /** The node's accept-and-spool path alone (own process) and its accepted msg/s. */
  ingestCpuMsPerMessage?: number; ingestAccepted?: number; ingestCpuPass: boolean | null;
  accepted?: number; peerAccepted?: number; stored?: number; maildir?: number;
  cpuPass: boolean | null; ratePass: boolean | null; storedPass: boolean | null;
}>;

export function printPeers(rows: PeerRow[], clientCounts: readonly number[], patterns: readonly string[], peers: readonly string[]): PeerVerdicts {
  const find = (target: string, clients: number, pattern: string) =>
    rows.find((r) => r.target === target && r.clients === clients && r.pattern === pattern && !r.greetingDelayMs && r.load);
  const verdict = (pass: boolean | null) => (pass === null ? 'n/a' : pass ? 'PASS' : 'BELOW');
  const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || !b ? undefined : a / b);
  const r2 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(2));
  const verdicts: PeerVerdicts = {};
  const header = ['peer', 'clients', 'pattern', 'peer CPU ms', 'spool CPU ms', 'spool÷peer', '<= 1', 'node CPU ms', 'node÷peer',
    'peer msg/s', 'spool msg/s', 'node msg/s', 'node÷peer', '>= 1', 'stored msg/s', '÷ Maildir', '>= 0.5', 'edge CPU ms'];
  const cells: string[][] = [];
  for (const peer of peers) {
    for (const clients of clientCounts) {
      for (const name of patterns) {
        const theirs = find(peer, clients, name);
        const ours = find(EDGEMAIL, clients, name);
        if (!theirs?.load || !ours?.load) continue;
        const node = ours.endToEnd?.cpuMsPerMessage;
        const stack = ours.endToEnd?.stackCpuMsPerMessage;
        const edge = node !== undefined && stack !== undefined ? stack - node : undefined;
        const cpu = ratio(node, theirs.cpuMsPerMessage);
        const ingest = find(NODE_PROCESS, clients, name);
        const ingestCpu = ratio(ingest?.cpuMsPerMessage, theirs.cpuMsPerMessage);
        const rate = ratio(ours.load.perSecond, theirs.load.perSecond);
        const maildir = find(MAILDIR, clients, name)?.load?.perSecond;
        const stored = ratio(ours.endToEnd?.perSecond, maildir);
        const v = {
          peer, nodeCpuMsPerMessage: node, peerCpuMsPerMessage: theirs.cpuMsPerMessage, edgeCpuMsPerMessage: edge,
          accepted: ours.load.perSecond, peerAccepted: theirs.load.perSecond, stored: ours.endToEnd?.perSecond, maildir,
          cpuPass: cpu === undefined ? null : cpu <= GOAL_CPU,
          ingestCpuMsPerMessage: ingest?.cpuMsPerMessage, ingestAccepted: ingest?.load?.perSecond,
          ingestCpuPass: ingestCpu === undefined ? null : ingestCpu <= GOAL_CPU,
          ratePass: rate === undefined ? null : rate >= GOAL_RATE,
          storedPass: maildir ? (stored ?? 0) >= GOAL_STORED_MAILDIR : null,
        };
        verdicts[`${peer}, ${clients} clients, ${name}`] = v;
        cells.push([peer.split(' ')[0]!, String(clients), name, f1(theirs.cpuMsPerMessage), f1(ingest?.cpuMsPerMessage), r2(ingestCpu), verdict(v.ingestCpuPass),
          f1(node), r2(cpu), f0(theirs.load.perSecond), f0(ingest?.load?.perSecond), f0(ours.load.perSecond), r2(rate), verdict(v.ratePass),
          ours.endToEnd?.perSecond === undefined ? 'not all' : f0(ours.endToEnd.perSecond), r2(stored), verdict(v.storedPass), f1(edge)]);
      }
    }
  }
  if (!cells.length) return verdicts;
  console.log('issue 31 §2: the relay node beside Haraka (same checks: SPF, one DKIM signature, DMARC), and stored end to end ÷ Postfix → Maildir');
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((x, i) => (i === 0 || i === 2 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
  console.log('peer CPU: the peer\'s process (every thread, /proc) over its run ÷ accepted. spool CPU: the same of the node\'s accept-and-spool path in a process of its own ' +
    `(${NODE_PROCESS}: listener, checks, fsynced spool, nothing forwarding), the goal's figure. node CPU: the real pipeline's relay node process (every thread) from before a run to ` +
    'its last message stored, accepting and forwarding, ÷ messages. node msg/s: the real pipeline\'s accepted rate. edge CPU: workerd, PostgreSQL and the bench process (Neon bridge) over the node\'s span ÷ messages.');
  console.log('');
  return verdicts;
}
