// `pnpm bench relay-node`: the PACKAGED relay node (`pnpm relay:pack`'s
// tarball installed with npm, run as `edgemail-relay start` in a process of
// its own) against a throwaway local stack: its resident memory and CPU idle,
// at 100 inbound messages a second (paced), and under the inbound bench's load
// (10 clients, 10 messages per connection, 10 kB, as fast as it takes them);
// and the cost of scraping /metrics every second, two ways in the same run:
// the node's CPU per scrape (a burst of scrapes while idle) and the difference
// between the 100 msg/s phase with and without a scrape a second. The machine
// is shared, so the figures that matter are the ratios. Linux only (/proc).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packRelayNode } from '../relay-node/scripts/pack.js';
import { startDnsServer } from '../relay-node/test-support/dns-server.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { numberFlags } from './args.js';
import { call, mintKey, sql } from './support/api.js';
import { freePort } from './support/postfix.js';
import { finishRun, startRun } from './support/results.js';
import { buildMessage } from './support/smtp-message.js';
import { startSmtpLoader } from './support/smtp-load.js';
import { bootstrap, cleanups, withStack } from './support/stack.js';

const run = promisify(execFile);
const DOMAIN = 'relay-node-bench.test';
const FROM = 'bench@sender.test';
const TICK_MS = 10; // USER_HZ

interface Options { seconds: number; rate: number; scrapes: number; messages: number }
const DEFAULTS: Options = { seconds: 20, rate: 100, scrapes: 300, messages: 2000 };

/** utime + stime of `pid`, ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** Resident memory of `pid`, MB. */
function rssMb(pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return kb / 1024;
}

interface Phase { name: string; seconds: number; cpuMsPerSecond: number; cpuPercent: number; rssMbEnd: number; rssMbMax: number; accepted?: number; perSecond?: number; scrapes?: number }

/** Runs `during` for `seconds` while sampling the node's CPU and RSS. */
async function phase(name: string, pid: number, seconds: number, during: (until: number) => Promise<Partial<Phase>>): Promise<Phase> {
  let rssMax = rssMb(pid);
  const sampler = setInterval(() => { rssMax = Math.max(rssMax, rssMb(pid)); }, 500);
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  const extra = await during(Date.now() + seconds * 1000);
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = cpuMs(pid) - cpu0;
  clearInterval(sampler);
  const rssEnd = rssMb(pid);
  const result: Phase = { name, seconds: elapsed, cpuMsPerSecond: cpu / elapsed, cpuPercent: cpu / elapsed / 10, rssMbEnd: rssEnd, rssMbMax: Math.max(rssMax, rssEnd), ...extra };
  console.log(`  ${name.padEnd(44)} CPU ${result.cpuMsPerSecond.toFixed(1).padStart(6)} ms/s (${result.cpuPercent.toFixed(2)}% of a core)  RSS ${rssEnd.toFixed(1)} MB (max ${result.rssMbMax.toFixed(1)})${extra.perSecond ? `  ${extra.perSecond.toFixed(1)} msg/s accepted` : ''}`);
  return result;
}

let sequence = 0;
const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

/** One GET /metrics; its size. */
async function scrape(port: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  return (await res.text()).length;
}

/** A scrape a second until `until`. */
async function scrapeEverySecond(port: number, until: number): Promise<number> {
  let n = 0;
  while (Date.now() < until) {
    const next = Date.now() + 1000;
    await scrape(port);
    n++;
    await sleepUntil(Math.min(next, until));
  }
  return n;
}

/** `rate` messages a second, each in its own session (as MTAs deliver), until `until`. */
async function paced(port: number, rate: number, until: number, to: string): Promise<Partial<Phase>> {
  const message = buildMessage(10_240, FROM, to);
  const started = Date.now();
  let accepted = 0;
  let failed = 0;
  let sample = '';
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; ; i++) {
    const at = started + (i * 1000) / rate;
    if (at >= until) break;
    await sleepUntil(at);
    const bytes = Buffer.concat([Buffer.from(message.header(sequence++)), message.body, Buffer.from('\r\n')]);
    const p = sendMessage({ port, from: FROM, to, message: bytes, helo: 'client.sender.test' }).then((r) => {
      if (r.response?.startsWith('250')) accepted++;
      else {
        failed++;
        sample ||= r.error?.response ?? r.error?.message ?? '';
      }
    });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }
  await Promise.all(inFlight);
  if (failed) console.log(`    (${failed} messages not accepted, e.g. ${sample})`);
  return { accepted, perSecond: accepted / ((Date.now() - started) / 1000) };
}

export async function runRelayNodeBench(argv: string[]): Promise<void> {
  const options = numberFlags(argv, DEFAULTS);
  const clock = startRun();
  const work = mkdtempSync(join(tmpdir(), 'edgemail-relay-bench-'));
  cleanups.add(async () => rmSync(work, { recursive: true, force: true }));
  console.log('relay-node: packing and installing the package…');
  const { tarball, version } = await packRelayNode(join(work, 'pack'));
  const install = join(work, 'install');
  mkdirSync(install);
  writeFileSync(join(install, 'package.json'), '{"private":true}\n');
  await run('npm', ['i', '--offline', '--no-audit', '--no-fund', tarball], { cwd: install });
  const bin = join(install, 'node_modules/.bin/edgemail-relay');
  const dns = await startDnsServer({ 'sender.test': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] }, '_dmarc.sender.test': { TXT: ['v=DMARC1; p=none'] } });

  const settings = { SERVICE_RATELIMIT_RELAY_NODE_INBOUND_PER_MINUTE: '1000000', SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000', SERVICE_RATELIMIT_ENABLED: 'false' };
  let child: ChildProcess | undefined;
  try {
    const figures = await withStack(settings, async (stack) => {
      const tenant = await bootstrap(stack);
      const key = await mintKey(stack, tenant.platformToken, tenant.projectId, ['relay:write', 'domains:write'], 'relay-bench');
      const domain = (await call(stack, 'POST', '/api/v1/domains', key, { name: DOMAIN })) as { domain: { id: string } };
      await sql(stack, (c) => c.query('UPDATE domains SET ownership_proven_at = now() WHERE id = $1', [domain.domain.id]));
      const stateDir = join(work, 'state');
      await run(bin, ['enroll', '--edge', stack.url, '--state-dir', stateDir, '--name', 'bench'], { env: { ...process.env, EDGEMAIL_RELAY_KEY: key } });
      const [inbound, metrics] = [await freePort(), await freePort()];
      const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_') && k !== 'NODE_OPTIONS'));
      child = spawn(bin, ['start', '--state-dir', stateDir, '--host', '127.0.0.1', '--port', String(inbound), '--submission-port', 'off'], {
        env: {
          ...base, SERVICE_SERVER_PUBLIC_URL: stack.url, SERVICE_DNS_SERVERS: dns.address, SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE: '0',
          SERVICE_OUTBOUND_HELO_NAME: 'mx.relay-node-bench.test', SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false',
          // Every client is 127.0.0.1: no per-address session cap (as `pnpm bench inbound`).
          SERVICE_RELAY_NODE_INBOUND_MAX_SESSIONS_PER_IP: '0',
          SERVICE_RELAY_NODE_METRICS_ENABLED: 'true', SERVICE_RELAY_NODE_METRICS_PORT: String(metrics),
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const node = child;
      cleanups.add(async () => { node.kill('SIGKILL'); });
      const pid = child.pid!;
      for (let i = 0; ; i++) {
        const ready = await fetch(`http://127.0.0.1:${metrics}/readyz`).then((r) => r.status === 200, () => false);
        if (ready) break;
        if (i > 120) throw new Error('the packaged node did not become ready in 60 s');
        await new Promise((r) => setTimeout(r, 500));
      }
      const to = `inbox@${DOMAIN}`;
      console.log(`relay-node: edgemail-relay ${version} (pid ${pid}) ready; ${options.seconds} s per phase`);
      // Warm-up: JIT, the verification workers, the edge's first forwards.
      await paced(inbound, options.rate, Date.now() + 5000, to);
      await new Promise((r) => setTimeout(r, 3000));

      const idle = await phase('idle', pid, options.seconds, async (until) => { await sleepUntil(until); return {}; });
      const idleScraped = await phase('idle, /metrics scraped every second', pid, options.seconds, async (until) => ({ scrapes: await scrapeEverySecond(metrics, until) }));
      // The node's CPU per scrape, from a burst while idle (minus idle's own CPU over the burst's time).
      const burstCpu0 = cpuMs(pid);
      const burstT0 = performance.now();
      let bytes = 0;
      for (let i = 0; i < options.scrapes; i++) bytes = await scrape(metrics);
      const burstSeconds = (performance.now() - burstT0) / 1000;
      const perScrapeMs = Math.max(0, cpuMs(pid) - burstCpu0 - idle.cpuMsPerSecond * burstSeconds) / options.scrapes;
      console.log(`  ${options.scrapes} scrapes back to back: ${perScrapeMs.toFixed(2)} ms of node CPU each (${bytes} bytes of text)`);

      // The same load with and without a scrape a second, in alternating slices so that the machine's other
      // work falls on both alike; each side's figures are summed over its slices.
      const slices = 4;
      const slice = options.seconds / slices;
      const without: Phase[] = [];
      const withScrape: Phase[] = [];
      for (let i = 0; i < slices; i++) {
        without.push(await phase(`${options.rate} msg/s (10 kB, a session each) ${i + 1}/${slices}`, pid, slice, (until) => paced(inbound, options.rate, until, to)));
        withScrape.push(await phase(`${options.rate} msg/s + a scrape a second ${i + 1}/${slices}`, pid, slice, async (until) => {
          const [load, scrapes] = await Promise.all([paced(inbound, options.rate, until, to), scrapeEverySecond(metrics, until)]);
          return { ...load, scrapes };
        }));
      }
      const combine = (name: string, parts: Phase[]): Phase => {
        const seconds = parts.reduce((a, p) => a + p.seconds, 0);
        const cpu = parts.reduce((a, p) => a + p.cpuMsPerSecond * p.seconds, 0);
        const accepted = parts.reduce((a, p) => a + (p.accepted ?? 0), 0);
        return {
          name, seconds, cpuMsPerSecond: cpu / seconds, cpuPercent: cpu / seconds / 10, rssMbEnd: parts.at(-1)!.rssMbEnd,
          rssMbMax: Math.max(...parts.map((p) => p.rssMbMax)), accepted, perSecond: accepted / seconds, scrapes: parts.reduce((a, p) => a + (p.scrapes ?? 0), 0),
        };
      };
      const loaded = combine(`${options.rate} msg/s`, without);
      const loadedScraped = combine(`${options.rate} msg/s, /metrics scraped every second`, withScrape);
      console.log(`  ${options.rate} msg/s: ${loaded.cpuMsPerSecond.toFixed(1)} ms/s of CPU without scrapes, ${loadedScraped.cpuMsPerSecond.toFixed(1)} ms/s with a scrape a second`);
      const loader = startSmtpLoader();
      const full = await phase('inbound bench load (10 clients, 10/conn, 10 kB)', pid, options.seconds, async (until) => {
        const r = await loader.run({ host: '127.0.0.1', port: inbound, connections: 10, perConnection: 10, total: options.messages, timeLimitMs: until - Date.now(), size: 10_240, from: FROM, to, helo: 'client.sender.test' });
        await sleepUntil(until);
        return { accepted: r.accepted, perSecond: r.perSecond };
      });
      loader.close();

      const scrapeShareBurst = perScrapeMs / loaded.cpuMsPerSecond;
      const scrapeShareAB = (loadedScraped.cpuMsPerSecond - loaded.cpuMsPerSecond) / loaded.cpuMsPerSecond;
      console.log('');
      console.log(`resident memory of the packaged node: ${idle.rssMbEnd.toFixed(1)} MB idle, ${loaded.rssMbMax.toFixed(1)} MB at ${options.rate} msg/s, ${full.rssMbMax.toFixed(1)} MB under the inbound bench load`);
      console.log(`CPU: ${idle.cpuPercent.toFixed(2)}% of a core idle, ${loaded.cpuPercent.toFixed(1)}% at ${options.rate} msg/s (${(loaded.cpuMsPerSecond / (loaded.perSecond ?? options.rate)).toFixed(2)} ms per message), ${full.cpuPercent.toFixed(1)}% at ${full.perSecond?.toFixed(0)} msg/s`);
      console.log(`a /metrics scrape every second at ${options.rate} msg/s: ${(scrapeShareBurst * 100).toFixed(2)}% of the node's CPU (CPU per scrape ÷ CPU per second under load); `
        + `A/B of the two ${options.rate} msg/s phases: ${(scrapeShareAB * 100).toFixed(2)}% (noisy on a shared machine); goal < 1%: ${scrapeShareBurst < 0.01 ? 'met' : 'NOT met'}`);
      return { version, options, phases: [idle, idleScraped, loaded, loadedScraped, full], perScrapeCpuMs: perScrapeMs, scrapeBytes: bytes, scrapeShareOfNodeCpu: scrapeShareBurst, scrapeShareOfNodeCpuAB: scrapeShareAB };
    });
    finishRun('relay-node', clock, figures);
  } finally {
    child?.kill('SIGTERM');
    await dns.close();
    rmSync(work, { recursive: true, force: true });
  }
}
