// `pnpm bench submission`: messages/s accepted over authenticated SMTP
// submission (STARTTLS, 10 clients, 10 kB messages; each reusing its session,
// then one message per connection) by a relay node of the local stack (AUTH
// PLAIN with an API key, the 250 once the message is spooled under the key's
// lease, handed to the edge in batches), against
// Postfix's submission service on the same machine (smtpd with STARTTLS
// required, `-o smtpd_sasl_auth_enable=no`, the client trusted by
// `mynetworks`). Both pass their mail on to the same smtp-sink while they
// accept (the node as its smarthost, Postfix as a relay transport). Goal: ours
// at least half of Postfix's rate (bench/README.md, "submission").
import { execFile, fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { promisify } from 'node:util';
import pg from 'pg';
import { numberFlags } from './args.js';
import type { SubmissionLoadOptions, SubmissionLoadResult } from './submission-load-child.js';
import type { SubmissionNodeMessage, SubmissionNodeStart } from './submission-node-child.js';
import { findPostfix, freePort, POSTFIX_INSTALL, startPostfix, startSmtpSink } from './support/postfix.js';
import { finishRun, startRun } from './support/results.js';
import { bootstrap, cleanups, withStack } from './support/stack.js';

const run = promisify(execFile);
const SIZE = 10_240;
const CLIENTS = 10;
const GOAL = 0.5;
const DOMAIN = 'submission-bench.test';
const FROM = `bench@${DOMAIN}`;
/** Routed to smtp-sink: the node's smarthost, Postfix's relay transport. */
const SINK_DOMAIN = 'sink.test';
const TO = `bench@${SINK_DOMAIN}`;
const DEFAULTS = { messages: 2000, seconds: 30, warmup: 200 };

/** The load client in a child process, one run per call. */
function startLoader(): { run(o: SubmissionLoadOptions): Promise<SubmissionLoadResult>; close(): void } {
  const child = fork(new URL('./submission-load-child.ts', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let next = 0;
  const pending = new Map<number, { resolve: (r: SubmissionLoadResult) => void; reject: (e: Error) => void }>();
  child.on('message', (m: { id: number; result?: SubmissionLoadResult; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.result) p?.resolve(m.result);
    else p?.reject(new Error(`load client: ${m.error}`));
  });
  return {
    run: (options) => new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      child.send({ id, options });
    }),
    close: () => child.kill(),
  };
}

/** The relay node (with its submission listener) in a child process; its submission port. */
async function startNode(start: SubmissionNodeStart): Promise<{ port: number; cpu(): Promise<NodeJS.CpuUsage>; stop(): Promise<void> }> {
  // `BENCH_RELAY_NODE_CPU_PROF=<dir>`: the node's main thread profiled (`node --cpu-prof`, written when it stops), as in bench inbound.
  const profile = process.env.BENCH_RELAY_NODE_CPU_PROF;
  const child = fork(new URL('./submission-node-child.ts', import.meta.url), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [...process.execArgv, ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [])],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      if (child.connected) child.send('stop');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
  };
  cleanups.add(stop);
  const first = await new Promise<SubmissionNodeMessage | { exited: true }>((resolve) => {
    child.once('message', (m: SubmissionNodeMessage) => resolve(m));
    void exited.then(() => resolve({ exited: true }));
    child.send(start);
  });
  if (!('port' in first)) {
    await stop();
    throw new Error(`the relay node did not start: ${'error' in first ? first.error : 'its process exited'}`);
  }
  const cpu = () => new Promise<NodeJS.CpuUsage>((resolve) => {
    const answer = (m: SubmissionNodeMessage) => { if ('cpu' in m) { child.off('message', answer); resolve(m.cpu); } };
    child.on('message', answer);
    child.send('cpu');
  });
  return { port: first.port, cpu, stop: async () => { await stop(); cleanups.delete(stop); } };
}

async function api<T>(url: string, method: string, path: string, token: string, body?: unknown, project?: string): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(project ? { 'X-Service-Project-Id': project } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

const fmt = (r: SubmissionLoadResult) =>
  `${r.perSecond.toFixed(0).padStart(6)} msg/s   ${String(r.accepted).padStart(5)} accepted   p50 ${r.latencyMs.p50.toFixed(1).padStart(6)} ms   p99 ${r.latencyMs.p99.toFixed(1).padStart(6)} ms` +
  `${r.reconnects ? `   ${r.reconnects} sessions reopened` : ''}${r.refused || r.errors ? `   ${r.refused} refused, ${r.errors} errors (${r.sampleProblem})` : ''}`;

export async function runSubmissionBench(argv: string[]): Promise<void> {
  const opts = numberFlags(argv, DEFAULTS);
  const tools = findPostfix();
  if ('missing' in tools) throw new Error(`${tools.missing}; install it with:\n  ${POSTFIX_INSTALL.join('\n  ')}`);
  const clock = startRun();
  console.error(`bench submission: ${opts.messages} messages of ${SIZE / 1024} kB, ${CLIENTS} clients, STARTTLS, sessions reused and then one message per connection; runs bounded to ${opts.seconds}s, ${opts.warmup} warm-up messages first`);
  const load = (port: number, total: number, password?: string, perConnection = 0) =>
    loader.run({ port, clients: CLIENTS, total, timeLimitMs: opts.seconds * 1000, size: SIZE, from: FROM, to: TO, password, perConnection });

  const sink = await startSmtpSink(tools, await freePort());
  const loader = startLoader();
  try {
    // ---- ours: the local stack and one relay node, delivering to the sink as its smarthost.
    const settings = {
      SERVICE_RATELIMIT_RELAY_NODE_INBOUND_PER_MINUTE: '10000000',
      SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '10000000',
      SERVICE_RATELIMIT_API_PER_MINUTE: '10000000',
      SERVICE_SUBMISSION_RATE_PER_MINUTE: '0',
      SERVICE_OUTBOUND_SMARTHOST: `127.0.0.1:${sink.port}`,
    };
    const ours = await withStack(settings, async (stack) => {
      const tenant = await bootstrap(stack);
      const key = async (permissions: string[]) => (await api<{ token: string }>(stack.url, 'POST', '/api/v1/api-keys', tenant.platformToken, { name: permissions.join(','), permissions }, tenant.projectId)).token;
      const { domain } = await api<{ domain: { id: string } }>(stack.url, 'POST', '/api/v1/domains', await key(['domains:write']), { name: DOMAIN });
      // Verified as a DNS check would find it: the bench measures submission, not DNS.
      const client = new pg.Client({ connectionString: stack.databaseUrl });
      await client.connect();
      await client.query('UPDATE domains SET verified_at = now(), ownership_proven_at = now(), last_checked_at = now() WHERE id = $1', [domain.id]);
      await client.end();
      const password = await key(['emails:write']);
      const stateDir = mkdtempSync(`${os.tmpdir()}/bench-submission-node-`);
      const node = await startNode({ edgeUrl: stack.url, key: await key(['relay:write']), stateDir, settings: { ...settings, SERVICE_SERVER_PUBLIC_URL: stack.url } });
      try {
        console.error('  edgemail: warm-up…');
        await load(node.port, opts.warmup, password);
        const measure = async (perConnection: number) => {
          const before = await node.cpu();
          const result = await load(node.port, opts.messages, password, perConnection);
          const after = await node.cpu();
          const cpuMsPerMessage = result.accepted ? ((after.user - before.user + after.system - before.system) / 1000) / result.accepted : NaN;
          return { ...result, nodeCpuMsPerMessage: cpuMsPerMessage };
        };
        console.error('  edgemail: measuring, sessions reused…');
        const reused = await measure(0);
        console.error('  edgemail: measuring, one message per connection…');
        const single = await measure(1);
        return { reused, single };
      } finally {
        await node.stop();
        rmSync(stateDir, { recursive: true, force: true });
      }
    });

    // ---- Postfix: its submission service (STARTTLS required, no SASL, mynetworks), relaying to the same sink.
    const base = `/var/tmp/edgemail-subbench-${process.pid}`;
    mkdirSync(base, { recursive: true });
    const removeBase = async () => rmSync(base, { recursive: true, force: true });
    cleanups.add(removeBase);
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
      '-subj', '/CN=pfbench.local', '-keyout', `${base}/key.pem`, '-out', `${base}/cert.pem`]);
    const postfix = await startPostfix(tools, await freePort(), { domain: SINK_DOMAIN, port: sink.port }, [
      'smtpd_sasl_auth_enable=no', 'smtpd_tls_security_level=encrypt', `smtpd_tls_cert_file=${base}/cert.pem`, `smtpd_tls_key_file=${base}/key.pem`,
      'smtpd_relay_restrictions=permit_mynetworks,reject',
    ]);
    let theirs: { reused: SubmissionLoadResult; single: SubmissionLoadResult };
    try {
      await postfix.release(); // delivers while it accepts, as the node does
      console.error('  Postfix: warm-up…');
      await load(postfix.port, opts.warmup);
      console.error('  Postfix: measuring, sessions reused…');
      const reused = await load(postfix.port, opts.messages);
      console.error('  Postfix: measuring, one message per connection…');
      const single = await load(postfix.port, opts.messages, undefined, 1);
      theirs = { reused, single };
      await postfix.drain(30_000);
    } finally {
      await postfix.stop();
      await removeBase();
      cleanups.delete(removeBase);
    }

    const ratios = { reused: ours.reused.perSecond / theirs.reused.perSecond, single: ours.single.perSecond / theirs.single.perSecond };
    for (const mode of ['reused', 'single'] as const) {
      console.log(`\nsubmission, ${CLIENTS} clients, ${SIZE / 1024} kB, STARTTLS, ${mode === 'reused' ? 'sessions reused' : 'one message per connection (STARTTLS and AUTH each time)'}:`);
      console.log(`  edgemail (AUTH PLAIN, 250 once spooled under the key's lease)  ${fmt(ours[mode])}   node CPU ${ours[mode].nodeCpuMsPerMessage.toFixed(2)} ms/msg`);
      console.log(`  Postfix submission (no SASL, mynetworks)                       ${fmt(theirs[mode])}`);
      console.log(`  ratio ${ratios[mode].toFixed(2)} (goal ≥ ${GOAL}): ${ratios[mode] >= GOAL ? 'PASS' : 'BELOW'}`);
    }
    const pass = ratios.reused >= GOAL && ratios.single >= GOAL;
    finishRun('submission', clock, { options: { ...opts, clients: CLIENTS, size: SIZE }, edgemail: ours, postfix: theirs, ratios, goal: GOAL, pass });
  } finally {
    loader.close();
    await sink.stop();
  }
}
