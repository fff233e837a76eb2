// `pnpm bench <name> [flags]`: runs one benchmark. See bench/README.md.
import { runAnalyticsBench } from './analytics.js';
import { runConsoleBench } from './console.js';
import { runConsoleUiBench } from './console-ui.js';
import { runApiBench } from './api.js';
import { UsageError } from './args.js';
import { runInboundBench } from './inbound.js';
import { runOutboundBench } from './outbound.js';
import { runWebhooksBench } from './webhooks.js';
import { runSendBench } from './send.js';
import { runSubmissionBench } from './submission.js';
import { runTemplatesBench } from './templates.js';
import { runTlsBench } from './tls.js';
import { runRelayNodeBench } from './relay-node.js';

const benchmarks: Record<string, { summary: string; run: (argv: string[]) => Promise<void> }> = {
  api: {
    summary: 'health vs authenticated API throughput on the local stack  [--duration <s>] [--connections <n>] [--rounds <n>]',
    run: runApiBench,
  },
  inbound: {
    summary: 'SMTP accept rate and dot→250 latency: relay node vs Postfix and smtp-sink  [--messages <n>] [--seconds <n>] [--drain <n>] [--quick]',
    run: runInboundBench,
  },
  webhooks: {
    summary: 'webhook deliveries/s and event→receiver latency with 1 and 50 webhooks  [--rate 100] [--seconds 10] [--wide-rate 10] [--wide-webhooks 50]',
    run: runWebhooksBench,
  },
  analytics: {
    summary: 'analytics route p50/p99 over 90 days at 1M emails vs health, and the naive count for contrast  [--rows 1000000] [--days 90] [--duration 10] [--connections 8] [--rounds 2]',
    run: runAnalyticsBench,
  },
  submission: {
    summary: 'messages/s accepted over authenticated submission (STARTTLS, 10 clients, 10 kB) vs Postfix\'s submission service, to one smtp-sink  [--messages 2000] [--seconds 30] [--warmup 200]',
    run: runSubmissionBench,
  },
  templates: {
    summary: 'renders/s of a realistic template (preview route, and the engine alone), and a template send\'s latency over a plain send of the same content  [--duration 10] [--connections 8] [--rounds 2] [--renders 20000]',
    run: runTemplatesBench,
  },
  console: {
    summary: 'console: password sign-ins/s vs health, CPU ms per password verify in workerd and Node; event stream commit → browser p50/p99 at 100 events/s vs webhook delivery  [--sign-in-seconds 10] [--sign-in-connections 2] [--verifies 10] [--stream-rate 100] [--stream-seconds 10]',
    run: runConsoleBench,
  },
  'console-ui': {
    summary: 'the web console\'s production bundle: initial JS and CSS gzipped (goal: initial JS ≤ 150 kB), lazy pages apart; in Chromium: sign-in → interactive email log of 10,000 emails (goal < 1 s), send → row in the open log (goal p99 < 1 s)  [--emails 10000] [--sign-ins 5] [--sends 50] [--no-browser 1]',
    run: runConsoleUiBench,
  },
  tls: {
    summary: 'STARTTLS handshakes/s with per-handshake certificate resolution (SNI, assigned) vs one static certificate, same node and run; the certificate poll\'s 304 vs 200  [--seconds 5] [--rounds 3] [--connections 16]',
    run: runTlsBench,
  },
  'relay-node': {
    summary: 'the packaged relay node (pnpm relay:pack, run as edgemail-relay): resident memory and CPU idle, at 100 msg/s and under the inbound bench load; the cost of scraping /metrics every second as a share of its CPU  [--seconds 20] [--rate 100] [--scrapes 300] [--messages 2000]',
    run: runRelayNodeBench,
  },
  outbound: {
    summary: 'delivery alone: msg/s of one relay node (and --nodes 2) vs Postfix\'s queue → smtp-sink in alternating rounds, the node\'s CPU per message split main thread / compose workers  [--messages 2000] [--rounds 2] [--concurrency 20] [--sessions 20] [--compose-threads <n>] [--nodes 1]',
    run: runOutboundBench,
  },
  send: {
    summary: 'send API vs health throughput; delivery msg/s with 1 and 2 relay nodes vs Postfix, to smtp-sink  [--duration 10] [--connections 32] [--rounds 2] [--messages 2000] [--concurrency 20]',
    run: runSendBench,
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(benchmarks).map((n) => n.length));
  return ['usage: pnpm bench <benchmark> [flags]', '', ...Object.entries(benchmarks).map(([n, b]) => `  ${n.padEnd(width)}  ${b.summary}`)].join('\n');
}

const [name, ...rest] = process.argv.slice(2);
const bench = name ? benchmarks[name] : undefined;
if (!bench) {
  console.error(name ? `unknown benchmark "${name}"\n\n${usage()}` : usage());
  process.exit(2);
}

bench.run(rest).then(
  () => process.exit(process.exitCode ?? 0),
  (e: unknown) => {
    console.error(`\nbench ${name} failed: ${e instanceof Error ? e.message : String(e)}`);
    if (e instanceof Error && !(e instanceof UsageError) && e.stack) console.error(e.stack.split('\n').slice(1).join('\n'));
    process.exit(e instanceof UsageError ? 2 : 1);
  },
);
