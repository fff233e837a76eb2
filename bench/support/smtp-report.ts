// The figures of `pnpm bench inbound`: its rows, the table, the goal (ours ÷
// Postfix, with PASS / BELOW per cell) and the greeting-delay comparison.
import type { SmtpSourceResult } from './postfix.js';
import type { SmtpLoadResult } from './smtp-load.js';

export const SINK = 'smtp-sink (SMTP alone)';
export const DISCARD = 'Postfix → discard';
export const MAILDIR = 'Postfix → Maildir';
export const INGEST = 'node ingest, no edge';
export const EDGEMAIL = 'edgemail';

/** Ours should accept at least this share of Postfix's messages/s… */
export const GOAL_RATIO = 0.5;
/** …with p99 accept latency under this. */
export const GOAL_P99_MS = 250;
/** Issue 16's goals for the pipeline, ÷ Postfix → discard: messages accepted (250)… */
export const GOAL_ACCEPTED = 0.6;
/** …and messages stored in Postgres, end to end. */
export const GOAL_STORED = 0.5;

/** One run of the real pipeline, end to end: from its first 250 to its last message in Postgres. */
export interface EndToEnd {
  /** This run's messages in Postgres (inbound_emails) by the end of the wait. */
  stored: number;
  /** First 250 → the count in Postgres reaching every accepted message (looked at every 50 ms); absent when it never did. */
  seconds?: number;
  /** accepted ÷ seconds. */
  perSecond?: number;
  /** The relay node's CPU time (process.cpuUsage, user + system, all threads) over the same span ÷ messages accepted. */
  cpuMsPerMessage?: number;
  /** The same span's CPU of the node, workerd, PostgreSQL and the bench process (the Neon bridge) ÷ messages. */
  stackCpuMsPerMessage?: number;
}

export interface Row {
  target: string;
  clients: number;
  pattern: string;
  greetingDelayMs?: number;
  /** The references' throughput, from smtp-source. */
  smtpSource?: SmtpSourceResult;
  /** Every target's throughput and latency, from the Node load client. */
  load?: SmtpLoadResult;
  /** The real pipeline's rows: stored end to end, and the node's CPU per message. */
  endToEnd?: EndToEnd;
  note?: string;
}

export const f0 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(0));
export const f1 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x < 10 ? x.toFixed(2) : x.toFixed(1));

export function brief(r: Row): string {
  const parts: string[] = [];
  if (r.smtpSource) parts.push(`smtp-source ${f0(r.smtpSource.perSecond)} msg/s`);
  if (r.load) parts.push(`node client ${f0(r.load.perSecond)} msg/s, p50 ${f1(r.load.latencyMs.p50)} ms, p99 ${f1(r.load.latencyMs.p99)} ms, ${r.load.accepted}/${r.load.attempted} accepted`);
  if (r.endToEnd) {
    const e = r.endToEnd;
    parts.push(`stored ${e.stored}${e.perSecond === undefined ? '' : ` in ${e.seconds!.toFixed(1)}s = ${f0(e.perSecond)} msg/s end to end`}` +
      (e.cpuMsPerMessage === undefined ? '' : `, node CPU ${f1(e.cpuMsPerMessage)} ms/msg`) +
      (e.stackCpuMsPerMessage === undefined ? '' : `, stack CPU ${f1(e.stackCpuMsPerMessage)} ms/msg`));
  }
  if (r.note) parts.push(r.note);
  return parts.join('; ');
}

export function printTable(rows: Row[]): void {
  const header = ['target', 'clients', 'pattern', 'smtp-source msg/s', 'msg/s', 'p50 ms', 'p99 ms', 'accepted', 'stored msg/s', 'CPU ms/msg', 'note'];
  const cells = rows.map((r) => [
    r.greetingDelayMs ? `${r.target}, greeting ${r.greetingDelayMs} ms` : r.target,
    String(r.clients),
    r.pattern,
    r.smtpSource ? f0(r.smtpSource.perSecond) : '',
    f0(r.load?.perSecond),
    f1(r.load?.latencyMs.p50),
    f1(r.load?.latencyMs.p99),
    r.load ? `${r.load.accepted}/${r.load.attempted}` : '-',
    r.endToEnd ? f0(r.endToEnd.perSecond) : '',
    r.endToEnd ? f1(r.endToEnd.cpuMsPerMessage) : '',
    [r.load?.timedOut ? 'time bound hit' : '', r.note ?? ''].filter(Boolean).join('; ').slice(0, 120),
  ]);
  printAligned(header, cells, [0, 2, 10]);
  console.log('msg/s, p50 and p99: the Node load client (accept latency = final dot → 250). smtp-source -d keeps a session\'s connection for all its messages.');
  console.log('stored msg/s and CPU ms/msg (edgemail): accepted ÷ (first 250 → last in Postgres); the relay node\'s CPU over that span ÷ messages.');
}

export type Verdicts = Record<string, { ours: number; discard?: number; maildir?: number; p99Ms: number; pass: boolean | null }>;

/** ours ÷ Postfix for each clients × pattern cell, Node-client figures on both sides. */
export function printGoal(rows: Row[], clientCounts: readonly number[], patterns: readonly string[]): Verdicts {
  const verdicts: Verdicts = {};
  const find = (target: string, clients: number, pattern: string) =>
    rows.find((r) => r.target === target && r.clients === clients && r.pattern === pattern && !r.greetingDelayMs && r.load);
  const header = ['ours', 'clients', 'pattern', 'msg/s', '÷ discard', '÷ Maildir', 'p99 ms', 'verdict'];
  const cells: string[][] = [];
  for (const target of [EDGEMAIL, INGEST]) {
    for (const clients of clientCounts) {
      for (const name of patterns) {
        const ours = find(target, clients, name);
        if (!ours?.load) continue;
        const discard = find(DISCARD, clients, name)?.load?.perSecond;
        const maildir = find(MAILDIR, clients, name)?.load?.perSecond;
        const ratios = [discard, maildir].filter((x): x is number => x !== undefined && x > 0).map((x) => ours.load!.perSecond / x);
        const p99 = ours.load.latencyMs.p99;
        const pass = ratios.length ? ratios.every((x) => x >= GOAL_RATIO) && p99 < GOAL_P99_MS : null;
        const verdict = pass === null ? 'n/a' : pass ? 'PASS' : 'BELOW';
        cells.push([target, String(clients), name, f0(ours.load.perSecond),
          discard ? (ours.load.perSecond / discard).toFixed(2) : '-', maildir ? (ours.load.perSecond / maildir).toFixed(2) : '-',
          f1(p99), target === EDGEMAIL ? verdict : `(${verdict})`]);
        if (target === EDGEMAIL) verdicts[`${clients} clients, ${name}`] = { ours: ours.load.perSecond, discard, maildir, p99Ms: p99, pass };
      }
    }
  }
  console.log(`goal: ours >= ${GOAL_RATIO} × Postfix's msg/s (both deliveries) with p99 accept latency < ${GOAL_P99_MS} ms, both patterns`);
  if (!cells.length) console.log('  no figures of ours');
  else printAligned(header, cells, [0, 2, 7]);
  if (Object.values(verdicts).some((v) => v.pass === null)) console.log('n/a: no Postfix figures in this run to compare with');
  const edge = rows.find((r) => r.target === EDGEMAIL && !r.load);
  if (edge) console.log(`edgemail: ${edge.note}; the "node ingest, no edge" rows are the relay node's listener and spool alone (a bound, not the goal)`);
  else console.log('(verdicts in parentheses: the node\'s ingest path alone, a bound on the end-to-end figure, not the goal)');
  console.log('');
  return verdicts;
}

export type EndToEndVerdicts = Record<string, {
  accepted: number; stored?: number; discard?: number; cpuMsPerMessage?: number; stackCpuMsPerMessage?: number; acceptedPass: boolean | null; storedPass: boolean | null;
}>;

/**
 * Issue 16's goals, per clients × pattern cell of the real pipeline: accepted
 * msg/s ÷ Postfix → discard against GOAL_ACCEPTED, stored msg/s (end to end)
 * ÷ the same against GOAL_STORED, with the node's CPU per message beside them.
 */
export function printEndToEnd(rows: Row[], clientCounts: readonly number[], patterns: readonly string[]): EndToEndVerdicts {
  const verdicts: EndToEndVerdicts = {};
  const find = (target: string, clients: number, pattern: string) =>
    rows.find((r) => r.target === target && r.clients === clients && r.pattern === pattern && !r.greetingDelayMs && r.load);
  const verdict = (pass: boolean | null) => (pass === null ? 'n/a' : pass ? 'PASS' : 'BELOW');
  const header = ['clients', 'pattern', 'accepted msg/s', '÷ discard', `>= ${GOAL_ACCEPTED}`, 'stored msg/s', '÷ discard', `>= ${GOAL_STORED}`, 'node CPU ms/msg', 'stack CPU ms/msg'];
  const cells: string[][] = [];
  for (const clients of clientCounts) {
    for (const name of patterns) {
      const ours = find(EDGEMAIL, clients, name);
      if (!ours?.load) continue;
      const discard = find(DISCARD, clients, name)?.load?.perSecond;
      const stored = ours.endToEnd?.perSecond;
      const acceptedPass = discard ? ours.load.perSecond / discard >= GOAL_ACCEPTED : null;
      const storedPass = discard ? (stored ?? 0) / discard >= GOAL_STORED : null;
      const cpu = ours.endToEnd?.cpuMsPerMessage;
      const stackCpu = ours.endToEnd?.stackCpuMsPerMessage;
      cells.push([String(clients), name, f0(ours.load.perSecond), discard ? (ours.load.perSecond / discard).toFixed(2) : '-', verdict(acceptedPass),
        stored === undefined ? 'not all' : f0(stored), discard && stored !== undefined ? (stored / discard).toFixed(2) : '-', verdict(storedPass), f1(cpu), f1(stackCpu)]);
      verdicts[`${clients} clients, ${name}`] = { accepted: ours.load.perSecond, stored, discard, cpuMsPerMessage: cpu, stackCpuMsPerMessage: stackCpu, acceptedPass, storedPass };
    }
  }
  if (!cells.length) return verdicts;
  console.log(`issue 16: edgemail accepted >= ${GOAL_ACCEPTED} and stored >= ${GOAL_STORED} × Postfix → discard msg/s`);
  printAligned(header, cells, [1]);
  console.log('stored msg/s: a run\'s accepted messages ÷ (its first 250 → the last of them in Postgres). node CPU: the relay node process over the same span ÷ messages; stack CPU: that plus workerd, PostgreSQL and the bench process (the Neon bridge).');
  console.log('');
  return verdicts;
}

/** Each greeting delay's row at 10 clients, one message per connection, side by side. */
export function printGreeting(rows: Row[], delaysMs: readonly number[]): void {
  for (const target of [EDGEMAIL, INGEST]) {
    const at = delaysMs.map((d) => rows.find((r) => r.target === target && r.clients === 10 && r.pattern === '1/conn' && (r.greetingDelayMs ?? 0) === d && r.load));
    if (at.some((r) => !r)) continue;
    console.log(`greeting delay, ${target}, 10 clients, 1/conn: ` + at.map((r, i) =>
      `${delaysMs[i]} ms → ${f0(r!.load!.perSecond)} msg/s (p99 ${f1(r!.load!.latencyMs.p99)} ms)`).join(', '));
  }
}

function printAligned(header: string[], rows: string[][], leftAligned: number[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (leftAligned.includes(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

