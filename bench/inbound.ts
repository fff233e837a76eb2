// `pnpm bench inbound`: messages/s accepted and accept latency (DATA's final
// dot → 250) of inbound SMTP, with 10 and 50 concurrent clients, one message
// per connection and ten per connection, 10 kB messages. In the same run, on
// the same machine, two references: Postfix (a throwaway instance delivering
// to `discard:` and to a virtual Maildir) and Postfix's smtp-sink (the SMTP
// exchange alone). smtp-source gives the references' throughput; one Node load
// client (bench/support/smtp-load.ts) drives every target, so latencies and
// the ours/Postfix ratios come from one method. Ours is the real pipeline (the
// local stack's relay node forwarding to the edge, counted in Postgres) and,
// as a diagnostic, the node's ingest path alone (listener → verdicts → fsynced
// spool). Beside Postfix, the same-runtime peer: Haraka with SPF, DKIM and
// DMARC checks, queueing to discard (PEERS below). Every message carries one
// DKIM signature and asks for SPF and DMARC. The machine is shared, so the
// figures that matter are the ratios.
import { startDnsServer } from '../relay-node/test-support/dns-server.js';
import { finishRun, startRun } from './support/results.js';
import { numberFlags } from './args.js';
import { findPostfix, freePort, POSTFIX_INSTALL, runSmtpSource, startPostfix, startSmtpSink } from './support/postfix.js';
import { edgemailSettings, withEdgemailInbound, withGreetingDelay } from './support/smtp-edgemail.js';
import { startSmtpLoader, type SmtpLoadOptions, type SmtpLoadResult } from './support/smtp-load.js';
import { startNodeIngest } from './support/smtp-node-ingest.js';
import { descendantsCpuMs } from './support/process-cpu.js';
import { benchDkimKey, type BenchDkimKey } from './support/dkim-signature.js';
import { startHaraka } from './support/haraka.js';
import { HARAKA, NODE_PROCESS, printPeers, type PeerRow } from './support/haraka-report.js';
import { startNodeIngestProcess } from './support/haraka-node-ingest.js';
import { printRspamd, RSPAMD_PEER, startNodeIngestWithRspamd } from './support/rspamd-peer.js';
import { brief, DISCARD, EDGEMAIL, f0, GOAL_ACCEPTED, GOAL_P99_MS, GOAL_RATIO, GOAL_STORED, INGEST, MAILDIR, printEndToEnd, printGoal, printGreeting, printTable, SINK, type EndToEnd, type Row } from './support/smtp-report.js';

// ---------------------------------------------------------------- options

interface InboundOptions {
  /** Messages per measured run. */
  messages: number;
  /** Time bound of one run, in seconds: no new message starts after it. */
  seconds: number;
  /** Longest wait, in seconds, for the forwarder (and Postfix's queue) to drain. */
  drain: number;
  /** --rules-only: pairs (without rules, then with them) measured in turn. */
  rounds: number;
}

const DEFAULTS: InboundOptions = { messages: 1000, seconds: 20, drain: 30, rounds: 2 };
const QUICK: InboundOptions = { messages: 200, seconds: 5, drain: 10, rounds: 2 };

const SIZE = 10_240;

/**
 * CPU of the stack's other processes so far, ms: workerd (the Worker and
 * wrangler's proxy), PostgreSQL, and this process (the Neon bridge, the DNS
 * server, the bench's own polling). With the relay node's, it is the CPU a
 * stored message costs end to end. Undefined off Linux.
 */
function stackCpuMs(): number | undefined {
  try {
    const { workerd, postgres } = descendantsCpuMs(['workerd', 'postgres']);
    const self = process.cpuUsage();
    return workerd! + postgres! + (self.user + self.system) / 1000;
  } catch {
    return undefined;
  }
}
const CLIENTS = [10, 50] as const;
const PATTERNS = [
  { name: '1/conn', perConnection: 1 },
  { name: '10/conn', perConnection: 10 },
] as const;
type Pattern = (typeof PATTERNS)[number];
const CELLS = CLIENTS.flatMap((clients) => PATTERNS.map((pattern) => ({ clients, pattern })));
/** Greeting delays compared on our targets, 10 clients, one message per connection. */
const GREETING_DELAYS_MS = [0, 100] as const;

const FROM = 'bench@sender.test';
const HELO = 'client.sender.test';
const DOMAIN = 'inbound-bench.test';
/**
 * The sender's DNS: SPF passes for 127.0.0.1, DKIM passes (`dkim`, a key made
 * for the run: every message carries one signature by it), DMARC p=none
 * passes aligned.
 */
const senderDns = (dkim: BenchDkimKey) => ({
  'sender.test': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
  '_dmarc.sender.test': { TXT: ['v=DMARC1; p=none'] },
  [`${dkim.selector}._domainkey.sender.test`]: { TXT: [dkim.record] },
});

/** A peer MTA started beside Postfix and measured like it, with its process CPU per message; add one here. */
interface Peer {
  name: string;
  start(o: { port: number; domain: string; dnsServer: string }): Promise<{ port: number; to: string; cpuMs(): number; stop(): Promise<void> } | { unavailable: string }>;
}
const PEERS: Peer[] = [
  { name: HARAKA, start: (o) => startHaraka(o) },
  // The node's own accept-and-spool path in a process of its own: its CPU beside Haraka's, nothing forwarding.
  { name: NODE_PROCESS, start: (o) => startNodeIngestProcess(o) },
  // The same process with spam scoring on: each message also streamed to a real rspamd, whose own CPU is reported apart (issue 32).
  { name: RSPAMD_PEER, start: (o) => startNodeIngestWithRspamd(o) },
];

// ---------------------------------------------------------------- targets

/** One SMTP server under load. */
interface Target {
  name: string;
  port: number;
  to: string;
  /** Also driven by smtp-source (the references). */
  smtpSource: boolean;
  /** The target's own process CPU so far, ms (a peer's): its CPU per accepted message goes on its row. */
  cpuMs?: () => number;
  greetingDelayMs?: number;
  /** After each run, with the messages it got accepted: wait for queues to drain; a note when they did not. */
  settle?: (accepted: number) => Promise<string | undefined>;
  /**
   * The real pipeline, called before a measured run: the returned function,
   * given the run, waits for its messages to be in Postgres (instead of
   * `settle`) and gives its end-to-end figures.
   */
  track?: () => Promise<(run: SmtpLoadResult) => Promise<{ endToEnd: EndToEnd; note?: string }>>;
}

/** The real pipeline on one stack: its relay node and, when the bench starts nodes, another with other settings. */
interface Pipeline {
  target: Target;
  other?: (greetingDelayMs: number) => Promise<Target>;
  /** The same node after giving the project `n` routing rules (docs/inbound-rules.md). */
  withRules?: (n: number) => Promise<Target>;
  /** The same node after taking them away again (--rules-only's next round). */
  withoutRules?: () => Promise<Target>;
}

interface EdgemailSummary {
  accepted: number;
  stored: number;
  /** The forwarder after the last run of the main stack: messages it brought to Postgres while we waited, and those left. */
  finalDrain?: { messages: number; seconds: number; left: number };
  domainVia?: string;
  nodeFrom?: string;
  /** Settings this checkout does not declare yet. */
  skipped: string[];
  unavailable?: string;
}

// ---------------------------------------------------------------- the benchmark

export async function runInboundBench(argv: string[]): Promise<void> {
  const quick = argv.includes('--quick');
  // --rules-only: the routing-rules pair alone (the pipeline without rules, then with them), no references or peers.
  const rulesOnly = argv.includes('--rules-only');
  const opts = numberFlags(argv.filter((a) => a !== '--quick' && a !== '--rules-only'), quick ? QUICK : DEFAULTS);
  opts.messages = Math.round(opts.messages);
  const clock = startRun();
  console.error(
    `bench inbound: ${opts.messages} messages of ${SIZE / 1024} kB per run, ${CLIENTS.join(' and ')} clients, ` +
    `${PATTERNS.map((p) => p.name).join(' and ')}, runs bounded to ${opts.seconds}s${quick ? ' (--quick)' : ''}`,
  );

  const began = Date.now();
  const progress = (line: string) => console.error(`  [${String(Math.round((Date.now() - began) / 1000)).padStart(3)}s] ${line}`);
  const dkim = benchDkimKey('sender.test');
  const dns = await startDnsServer(senderDns(dkim));
  const loader = startSmtpLoader();
  const rows: Row[] = [];
  const notes: string[] = [];
  const stops: (() => Promise<void>)[] = [];
  let edgemail: EdgemailSummary | undefined;
  try {
    const load: Load = (port, to, clients, perConnection, messages) =>
      loader.run({ host: '127.0.0.1', port, connections: clients, perConnection, total: messages, timeLimitMs: opts.seconds * 1000, size: SIZE, from: FROM, to, helo: HELO, dkim } satisfies SmtpLoadOptions);
    const tools = findPostfix();
    const measure = async (t: Target, clients: number, pattern: Pattern, messages: number): Promise<void> => {
      const row: Row = { target: t.name, clients, pattern: pattern.name, greetingDelayMs: t.greetingDelayMs };
      const problems: string[] = [];
      if (t.smtpSource && !('missing' in tools)) {
        row.smtpSource = await runSmtpSource(tools, {
          port: t.port, sessions: clients, messages, reuse: pattern.perConnection > 1, size: SIZE, from: FROM, to: t.to, timeLimitMs: opts.seconds * 1000,
        });
        if (row.smtpSource.error) problems.push(`smtp-source: ${row.smtpSource.error}`);
        problems.push(...[await t.settle?.(row.smtpSource.messages)].filter((x): x is string => !!x));
      }
      const finish = await t.track?.();
      const cpuBefore = t.cpuMs?.();
      row.load = await load(t.port, t.to, clients, pattern.perConnection, messages);
      if (cpuBefore !== undefined && row.load.accepted) (row as PeerRow).cpuMsPerMessage = (t.cpuMs!() - cpuBefore) / row.load.accepted;
      if (finish) {
        const { endToEnd, note } = await finish(row.load);
        row.endToEnd = endToEnd;
        if (note) problems.push(note);
      } else {
        problems.push(...[await t.settle?.(row.load.accepted)].filter((x): x is string => !!x));
      }
      if (row.load.refused || row.load.errors) problems.push(...[row.load.sampleRefusal, row.load.sampleError].filter((x): x is string => !!x));
      if (problems.length) row.note = problems.join('; ');
      rows.push(row);
      progress(`${t.name}${t.greetingDelayMs ? `, greeting ${t.greetingDelayMs} ms` : ''}, ${clients} clients, ${pattern.name}: ${brief(row)}`);
    };
    const warmUp = async (t: Target) => { await t.settle?.((await load(t.port, t.to, 50, 1, Math.min(200, opts.messages))).accepted); };

    // References: smtp-sink and one Postfix instance (discard and Maildir by recipient), up for the whole run.
    const references: Target[] = [];
    if (rulesOnly) notes.push('--rules-only: the routing-rules rows alone (no references, peers or node ingest)');
    else if ('missing' in tools) {
      notes.push(`references skipped: ${tools.missing}. To install Postfix (it ships smtp-source and smtp-sink; the benchmark configures its own instance under /var/tmp):`, ...POSTFIX_INSTALL.map((c) => `  ${c}`));
    } else {
      progress('starting smtp-sink and Postfix…');
      const sink = await startSmtpSink(tools, await freePort());
      stops.unshift(() => sink.stop());
      const postfix = await startPostfix(tools, await freePort());
      stops.unshift(async () => {
        progress(`Postfix delivered ${postfix.delivered()} messages to the Maildir; stopping it`);
        await postfix.stop();
      });
      const settle = async () => ((await postfix.drain(opts.drain * 1000)) ? undefined : `Postfix queue not empty after ${opts.drain}s`);
      references.push(
        { name: SINK, port: sink.port, to: 'bench@sink.test', smtpSource: true },
        { name: DISCARD, port: postfix.port, to: postfix.discardTo, smtpSource: true, settle },
        { name: MAILDIR, port: postfix.port, to: postfix.maildirTo, smtpSource: true, settle },
      );
    }
    // Peers (Haraka): the Node load client only (smtp-source's messages are unsigned); skipped with the reason when one cannot start.
    for (const peer of rulesOnly ? [] : PEERS) {
      progress(`starting ${peer.name}…`);
      const started = await peer.start({ port: await freePort(), domain: DOMAIN, dnsServer: dns.address });
      if ('unavailable' in started) {
        notes.push(`${peer.name}: ${started.unavailable}`);
        progress(`${peer.name}: ${started.unavailable}`);
        continue;
      }
      stops.unshift(() => started.stop());
      references.push({ name: peer.name, port: started.port, to: started.to, smtpSource: false, cpuMs: started.cpuMs });
    }

    // Ours: the node's ingest path alone, and the real pipeline. Every clients × pattern
    // cell runs on each target back to back, so drift on this shared machine hits all alike.
    const ingestAt = async (greetingDelayMs: number): Promise<Target & { stop(): Promise<void> }> => {
      const ingest = await startNodeIngest({ domain: DOMAIN, dnsServer: dns.address, greetingDelayMs });
      const stop = () => ingest.stop();
      stops.unshift(stop);
      return { name: INGEST, port: ingest.port, to: `bench@${DOMAIN}`, smtpSource: false, greetingDelayMs, stop };
    };
    const [fast, slow] = GREETING_DELAYS_MS;
    const slowCells = [{ clients: 10, pattern: PATTERNS[0] }];
    const slowMessages = Math.ceil(opts.messages / 4);
    const ingest = await ingestAt(fast);
    const runCells = async (targets: Target[], cells: { clients: number; pattern: Pattern }[], messages: number) => {
      for (const t of targets) await warmUp(t);
      for (const { clients, pattern } of cells) for (const t of targets) await measure(t, clients, pattern, messages);
    };

    /** Runs `fn` on the pipeline with `delay`; false when no relay node could be started. */
    const onPipeline = (delay: number, fn: (pipeline: Pipeline | undefined) => Promise<void>) => {
      const { settings, skipped } = edgemailSettings(delay, dns.address);
      progress(`starting the local stack and its relay node (greeting delay ${delay} ms)…`);
      return withEdgemailInbound(settings, DOMAIN, async (outcome) => {
        if ('unavailable' in outcome) {
          edgemail ??= { accepted: 0, stored: 0, skipped, unavailable: outcome.unavailable };
          progress(`${EDGEMAIL}: ${outcome.unavailable}`);
          await fn(undefined);
          rows.push({ target: EDGEMAIL, clients: 10, pattern: '1/conn', note: outcome.unavailable });
          return false;
        }
        const e = outcome.target;
        edgemail ??= { accepted: 0, stored: 0, skipped, domainVia: e.domainVia, nodeFrom: e.nodeFrom };
        // Messages this stack's project was sent, for the count in Postgres.
        let accepted = 0;
        // Each run waits (up to --drain) for its messages to be stored, so the
        // next starts on an empty spool and the end-to-end time is the run's own.
        const target = (port: number, greetingDelayMs: number, cpuUsage?: () => Promise<NodeJS.CpuUsage>): Target => ({
          name: EDGEMAIL, port, to: e.to, smtpSource: false, greetingDelayMs,
          settle: async (n) => {
            accepted += n;
            const { stored } = await e.drain(accepted, opts.drain * 1000);
            return stored < accepted ? `${accepted - stored} not in Postgres ${opts.drain}s after the run` : undefined;
          },
          track: async () => {
            const storedBefore = await e.stored();
            const cpuBefore = await cpuUsage?.();
            const stackBefore = stackCpuMs();
            return async (run) => {
              accepted += run.accepted;
              const drained = await e.drain(accepted, opts.drain * 1000);
              const cpuAfter = await cpuUsage?.();
              const stackAfter = stackCpuMs();
              const seconds = drained.doneAt !== undefined && run.firstAcceptedAt !== undefined ? (drained.doneAt - run.firstAcceptedAt) / 1000 : undefined;
              const cpuMs = cpuBefore && cpuAfter ? (cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system) / 1000 : undefined;
              const endToEnd: EndToEnd = {
                stored: drained.stored - storedBefore,
                seconds,
                perSecond: seconds === undefined ? undefined : run.accepted / Math.max(seconds, 0.001),
                cpuMsPerMessage: cpuMs === undefined || !run.accepted ? undefined : cpuMs / run.accepted,
                stackCpuMsPerMessage: cpuMs === undefined || stackAfter === undefined || stackBefore === undefined || !run.accepted
                  ? undefined : (cpuMs + stackAfter - stackBefore) / run.accepted,
              };
              return { endToEnd, note: drained.stored < accepted ? `${accepted - drained.stored} not in Postgres ${opts.drain}s after the run` : undefined };
            };
          },
        });
        const other = e.startNode && (async (d: number) => {
          const node = await e.startNode!(withGreetingDelay(settings, d));
          return target(node.port, d, () => node.cpuUsage());
        });
        // Routing rules go in after the other runs (they stay): 31 s for the node's periodic list refresh to bring the refusals.
        const withRules = e.addRoutingRules && (async (n: number) => {
          await e.addRoutingRules!(n, 31_000);
          return { ...target(e.port, delay, e.cpuUsage), name: RULES_ROW };
        });
        const withoutRules = e.removeRoutingRules && (async () => {
          await e.removeRoutingRules!(31_000);
          return { ...target(e.port, delay, e.cpuUsage), name: RULES_BASE_ROW };
        });
        await fn({ target: target(e.port, delay, e.cpuUsage), other, withRules, withoutRules });
        const before = await e.stored();
        progress(`waiting up to ${opts.drain}s for the forwarder: ${accepted - before} of ${accepted} accepted messages not in Postgres yet…`);
        const drained = await e.drain(accepted, opts.drain * 1000);
        edgemail.accepted += accepted;
        edgemail.stored += drained.stored;
        edgemail.finalDrain = { messages: drained.stored - before, seconds: drained.waitedMs / 1000, left: accepted - drained.stored };
        return true;
      });
    };

    let secondStack = false;
    const nodeAvailable = rulesOnly ? false : await onPipeline(fast, async (pipeline) => {
      await runCells([...references, ingest, ...(pipeline ? [pipeline.target] : [])], CELLS, opts.messages);
      // The greeting delay: 10 clients, one message per connection. A second node on the
      // same stack when the bench starts the nodes; otherwise a stack of its own below.
      await ingest.stop();
      const slowTargets: Target[] = [await ingestAt(slow)];
      if (pipeline?.other) slowTargets.push(await pipeline.other(slow));
      else secondStack = !!pipeline;
      await runCells(slowTargets, slowCells, slowMessages);
      // Last on this stack: the pipeline without rules, then with 20 routing rules per project, back to back
      // (10 clients, one message per connection), so the two are measured under the same load.
      if (pipeline?.withRules) {
        await measure({ ...pipeline.target, name: RULES_BASE_ROW }, 10, PATTERNS[0]!, opts.messages);
        await measure(await pipeline.withRules(RULES_PER_PROJECT), 10, PATTERNS[0]!, opts.messages);
      }
    });
    if (rulesOnly) {
      await ingest.stop();
      await onPipeline(fast, async (pipeline) => {
        if (!pipeline?.withRules) return;
        await warmUp(pipeline.target);
        // Rounds of the pair in the order plain, ruled, ruled, plain, … (the rules taken away again
        // between), so a steady drift of the shared machine's load cancels out of the pairs' mean.
        const plainRun = async (first: boolean) => measure(first ? { ...pipeline.target, name: RULES_BASE_ROW } : await pipeline.withoutRules!(), 10, PATTERNS[0]!, opts.messages);
        const ruledRun = async (fresh: boolean) => measure(fresh ? await pipeline.withRules!(RULES_PER_PROJECT) : { ...pipeline.target, name: RULES_ROW }, 10, PATTERNS[0]!, opts.messages);
        for (let round = 0; round < (pipeline.withoutRules ? opts.rounds : 1); round++) {
          if (round % 2 === 0) {
            await plainRun(round === 0);
            await ruledRun(true);
          } else {
            await ruledRun(false);
            await plainRun(false);
          }
        }
      });
    }
    if (nodeAvailable && secondStack) await onPipeline(slow, async (pipeline) => runCells([pipeline!.target], slowCells, slowMessages));
  } finally {
    for (const stop of stops) await stop().catch((e: unknown) => console.error(`  stopping: ${String(e)}`));
    loader.close();
    await dns.close();
  }

  // ---------------------------------------------------------------- output
  console.log('');
  printTable(rows);
  for (const n of notes) console.log(n);
  console.log('');
  const verdicts = printGoal(rows, CLIENTS, PATTERNS.map((p) => p.name));
  const endToEnd = printEndToEnd(rows, CLIENTS, PATTERNS.map((p) => p.name));
  const peers = printPeers(rows, CLIENTS, PATTERNS.map((p) => p.name), [HARAKA]);
  printRspamd(rows);
  printGreeting(rows, GREETING_DELAYS_MS);
  printRoutingRules(rows);
  if (edgemail && !edgemail.unavailable) {
    const d = edgemail.finalDrain;
    console.log(
      `edgemail end to end: ${edgemail.accepted} messages accepted (250), ${edgemail.stored} in Postgres (inbound_emails) by the end` +
      (d?.messages ? `; after the last run the forwarder brought ${d.messages} more in ${d.seconds.toFixed(1)}s (${f0(d.messages / Math.max(d.seconds, 0.001))} msg/s)${d.left ? `, ${d.left} still spooled at the ${opts.drain}s bound` : ''}` : '') +
      `. Relay node started by ${edgemail.nodeFrom}, domain registered with ${edgemail.domainVia}.`,
    );
  }
  if (edgemail?.skipped.length) console.log(`settings not declared in this checkout (left out): ${edgemail.skipped.join(', ')}`);
  finishRun('inbound', clock, {
    options: { ...opts, quick, size: SIZE, clients: CLIENTS, patterns: PATTERNS, greetingDelaysMs: GREETING_DELAYS_MS },
    goal: { ratio: GOAL_RATIO, p99Ms: GOAL_P99_MS, verdicts },
    endToEndGoal: { accepted: GOAL_ACCEPTED, stored: GOAL_STORED, verdicts: endToEnd },
    peers,
    edgemail,
    rows,
    notes,
  });
}

type Load = (port: number, to: string, clients: number, perConnection: number, messages: number) => Promise<SmtpLoadResult>;

// ---------------------------------------------------------------- output


// ---------------------------------------------------------------- routing rules (issue 32)

const RULES_PER_PROJECT = 20;
const RULES_ROW = `${EDGEMAIL}, ${RULES_PER_PROJECT} rules`;
const RULES_BASE_ROW = `${EDGEMAIL}, 0 rules`;

/**
 * The pipeline with routing rules against the same cell just before without
 * them, each pair (--rules-only may measure several): goal ≥ 0.9 of the plain
 * rate. The stack's CPU per stored message (node, workerd, PostgreSQL, the
 * bench with the Neon bridge) is compared too: it moves less with the load of
 * a shared machine than a rate does.
 */
function printRoutingRules(rows: Row[]): void {
  const cells = (name: string) => rows.filter((r) => r.target === name && r.clients === 10 && r.pattern === '1/conn' && !r.greetingDelayMs && r.load);
  const [plains, ruleds] = [cells(RULES_BASE_ROW), cells(RULES_ROW)];
  const ratio = (a?: number, b?: number) => (a && b ? (a / b).toFixed(2) : 'n/a');
  const cpu = (r: Row) => r.endToEnd?.stackCpuMsPerMessage;
  const ratios: number[] = [];
  for (const [i, ruled] of ruleds.entries()) {
    const plain = plains[i];
    if (!plain?.load || !ruled.load) continue;
    if (plain.load.perSecond && ruled.load.perSecond) ratios.push(ruled.load.perSecond / plain.load.perSecond);
    console.log(
      `routing rules${ruleds.length > 1 ? ` (pair ${i + 1})` : ''} (${RULES_PER_PROJECT} per project, none matching; goal ≥ 0.9): accepted ${f0(ruled.load.perSecond)} msg/s vs ${f0(plain.load.perSecond)} plain = ${ratio(ruled.load.perSecond, plain.load.perSecond)}` +
      `; stored end to end ${f0(ruled.endToEnd?.perSecond ?? 0)} vs ${f0(plain.endToEnd?.perSecond ?? 0)} msg/s = ${ratio(ruled.endToEnd?.perSecond, plain.endToEnd?.perSecond)}` +
      `; stack CPU ${cpu(ruled)?.toFixed(1) ?? 'n/a'} vs ${cpu(plain)?.toFixed(1) ?? 'n/a'} ms/msg = ${ratio(cpu(ruled), cpu(plain))}`,
    );
  }
  if (ratios.length > 1) {
    const mean = Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length);
    console.log(`routing rules, geometric mean of ${ratios.length} pairs' accepted ratios (goal ≥ 0.9): ${mean.toFixed(2)}`);
  }
}
