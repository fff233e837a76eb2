// `pnpm bench outbound`: delivery alone, the send bench's delivery half made
// focused. A queue of DKIM-signed messages delivered by one relay node (and by
// two) to Postfix's smtp-sink, against Postfix relaying as many messages from
// its own queue to the same sink, in alternating rounds so a shared machine's
// drift weighs on both; the node's CPU per delivered message, split between
// its main thread and its compose workers.
import { loadavg } from 'node:os';
import type { Stack } from '../edge/local/stack.js';
import { startDnsServer } from '../relay-node/test-support/dns-server.js';
import { numberFlags } from './args.js';
import { mintKey } from './support/api.js';
import { findPostfix, freePort, POSTFIX_INSTALL, startSmtpSink } from './support/postfix.js';
import { finishRun, startRun } from './support/results.js';
import { bootstrap, withStack } from './support/stack.js';
import { clearEmails, cpuSplitText, deliverWithNodes, postfixRelay, queueMessages, SETTINGS, SINK_DOMAIN, verifiedDomain, type DeliveryFigures } from './send.js';

const DEFAULTS = { messages: 2000, concurrency: 20, rounds: 2, nodes: 1, 'compose-threads': 0, sessions: 20 };
/** Issue 31: one node delivers at least 0.7 of Postfix's queue → sink rate. */
const GOAL = 0.7;

export async function runOutboundBench(argv: string[]): Promise<void> {
  const flags = numberFlags(argv, DEFAULTS);
  const tools = findPostfix();
  if ('missing' in tools) throw new Error(`bench outbound needs Postfix (its smtp-sink and the reference): ${tools.missing}. Install: ${POSTFIX_INSTALL.join(' && ')}`);
  const clock = startRun();
  const load = [loadavg()];
  console.error(`bench outbound: ${flags.rounds} rounds of ${flags.messages} messages; Postfix, then 1${flags.nodes > 1 ? ` and ${flags.nodes}` : ''} relay node(s), concurrency ${flags.concurrency}, ${flags.sessions} sessions per destination, compose threads ${flags['compose-threads'] || 'auto'}`);

  const rounds: DeliveryFigures[][] = await withStack(SETTINGS, async (stack) => {
    const tenant = await bootstrap(stack);
    const key = await mintKey(stack, tenant.platformToken, tenant.projectId, ['emails:write', 'emails:read', 'domains:write', 'relay:write'], 'bench-outbound');
    await verifiedDomain(stack, key);
    const sink = await startSmtpSink(tools, await freePort());
    const dns = await startDnsServer({ [SINK_DOMAIN]: { MX: [{ preference: 10, exchange: `mx.${SINK_DOMAIN}` }] }, [`mx.${SINK_DOMAIN}`]: { A: ['127.0.0.1'] } });
    const nodeSettings = {
      ...SETTINGS, SERVICE_DNS_SERVERS: dns.address, SERVICE_OUTBOUND_MX_PORT: String(sink.port), SERVICE_OUTBOUND_ALLOW_PRIVATE_MX: 'true',
      SERVICE_OUTBOUND_CONCURRENCY: String(flags.concurrency), SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE: '0',
      SERVICE_OUTBOUND_COMPOSE_THREADS: String(flags['compose-threads']), SERVICE_OUTBOUND_MAX_SESSIONS_PER_DESTINATION: String(flags.sessions),
    };
    const all: DeliveryFigures[][] = [];
    try {
      await clearEmails(stack);
      for (let round = 1; round <= flags.rounds; round++) {
        const rows: DeliveryFigures[] = [];
        // Postfix first in odd rounds, last in even ones: drift falls on both sides alike.
        const postfix = async () => {
          console.error(`  round ${round}: Postfix relaying ${flags.messages} messages from its queue…`);
          rows.push(await postfixRelay(tools, sink.port, flags.messages));
        };
        if (round % 2 === 1) await postfix();
        for (let nodes = 1; nodes <= flags.nodes; nodes++) {
          const tag = `outbound-${round}-${nodes}`;
          console.error(`  round ${round}: queueing ${flags.messages} messages, then delivering with ${nodes} relay node(s)…`);
          await queueMessages(stack, key, flags.messages, tag);
          rows.push(await deliverWithNodes(stack, key, nodes, nodeSettings, flags.messages, tag));
          await clearEmails(stack);
        }
        if (round % 2 === 0) await postfix();
        load.push(loadavg());
        all.push(rows);
      }
    } finally {
      await dns.close();
      await sink.stop();
    }
    return all;
  });

  const byName = new Map<string, DeliveryFigures[]>();
  for (const row of rounds.flat()) byName.set(row.name, [...(byName.get(row.name) ?? []), row]);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log('');
  console.log('| round | delivery to smtp-sink | msg/s | node CPU ms/msg | main / compose / other ms/msg | sent of queued |');
  console.log('|---|---|---|---|---|---|');
  rounds.forEach((rows, i) => {
    for (const d of rows) {
      const cpu = d.cpuMsPerMessage === undefined ? '' : d.cpuMsPerMessage.toFixed(2);
      console.log(`| ${i + 1} | ${d.name} | ${d.perSecond.toFixed(0)} | ${cpu} | ${cpuSplitText(d)} | ${d.sent === undefined ? '' : `${d.sent} of ${d.queued}`}${d.note ? ` (${d.note})` : ''} |`);
    }
  });
  const reference = byName.get('Postfix (queue → smtp-sink)')!;
  const postfixRate = mean(reference.map((r) => r.perSecond));
  const ratios: Record<string, number> = {};
  console.log('');
  for (const [name, rows] of byName) {
    if (rows === reference) continue;
    const rate = mean(rows.map((r) => r.perSecond));
    ratios[name] = rate / postfixRate;
    const split = rows.every((r) => r.cpuSplit) ? mean(rows.map((r) => r.cpuSplit!.main)) : null;
    const cpu = mean(rows.map((r) => r.cpuMsPerMessage ?? 0));
    console.log(`${name}: ${rate.toFixed(0)} msg/s against Postfix ${postfixRate.toFixed(0)}: ${ratios[name]!.toFixed(2)} of Postfix; goal >= ${GOAL}: ${ratios[name]! >= GOAL ? 'PASS' : 'BELOW'}`);
    if (split !== null) {
      const compose = mean(rows.map((r) => r.cpuSplit!.compose));
      const other = mean(rows.map((r) => r.cpuSplit!.other));
      console.log(`  node CPU per delivered message: ${cpu.toFixed(2)} ms = main thread ${split.toFixed(2)} + compose workers ${compose.toFixed(2)} + other threads ${other.toFixed(2)}`);
    } else {
      console.log(`  node CPU per delivered message: ${cpu.toFixed(2)} ms (no per-thread split: /proc is missing)`);
    }
  }
  console.log(`machine: ${flags.rounds} rounds, load average (1 min) ${load.map((l) => l[0]!.toFixed(2)).join(' → ')}`);
  finishRun('outbound', clock, { options: flags, rounds, postfixRate, ratios, loadAverage: load });
}
