// The reference MTAs of `pnpm bench inbound`: a throwaway Postfix instance and
// Postfix's smtp-sink, both on free loopback ports, and smtp-source to drive
// them. Postfix runs from a configuration of its own under /var/tmp (set up as
// /work/shared/recipes/mail-peers.md does, but with `postfix -c <dir>`), so
// /etc/postfix and the system queue are never touched; `stop()` stops it and
// removes the directory.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { cleanups } from './stack.js';
export { freePort } from '../../edge/local/free-port.js';
import { freePort } from '../../edge/local/free-port.js';

const run = promisify(execFile);
const SBIN = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/sbin'];

/** What a machine without Postfix needs (from the recipe); the benchmark configures its own instance. */
export const POSTFIX_INSTALL = [
  'apt-get update',
  'echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections',
  'DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postfix',
];

export interface PostfixTools {
  postfix: string;
  postconf: string;
  smtpSource: string;
  smtpSink: string;
}

/** The Postfix programs, or why the references cannot run here. */
export function findPostfix(): PostfixTools | { missing: string } {
  const find = (name: string) => SBIN.map((d) => `${d}/${name}`).find((p) => {
    try { accessSync(p, constants.X_OK); return true; } catch { return false; }
  });
  const programs = { postfix: 'postfix', postconf: 'postconf', smtpSource: 'smtp-source', smtpSink: 'smtp-sink' } as const;
  const tools = Object.fromEntries(Object.entries(programs).map(([key, name]) => [key, find(name)]));
  const absent = Object.entries(programs).filter(([key]) => !tools[key]).map(([, name]) => name);
  if (absent.length) return { missing: `Postfix is not installed (no ${absent.join(', ')})` };
  if (process.getuid?.() !== 0) return { missing: 'Postfix is installed but `postfix start` needs root' };
  return tools as unknown as PostfixTools;
}


/** Waits until something on `port` greets with 220. */
export async function waitForGreeting(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = await new Promise<string>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      let text = '';
      socket.setTimeout(2000, () => { socket.destroy(); resolve('timeout'); });
      socket.on('data', (d) => { text += d.toString('latin1'); if (text.includes('\n')) { socket.end('QUIT\r\n'); resolve(text); } });
      socket.on('error', (e) => resolve(e.message));
      socket.on('close', () => resolve(text || 'closed'));
    });
    if (last.startsWith('220')) return;
    await sleep(100);
  }
  throw new Error(`nothing greeted on 127.0.0.1:${port} within ${timeoutMs} ms (last: ${last.trim().slice(0, 200)})`);
}

// ---------------------------------------------------------------- Postfix

export interface RunningPostfix {
  port: number;
  /** A recipient routed to the `discard:` transport. */
  discardTo: string;
  /** A recipient delivered to a virtual Maildir. */
  maildirTo: string;
  /** Messages delivered to the Maildir so far. */
  delivered(): number;
  /** Waits (at most `timeoutMs`) until the queue is empty; false if it was not. */
  drain(timeoutMs: number): Promise<boolean>;
  /** Messages in the queue (any state). */
  queued(): number;
  /** With `relay`: lets the held relay queue go (delivery starts now). */
  release(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Relays mail for `domain` to `[127.0.0.1]:port` with Postfix's smtp client,
 * held in the queue (`defer_transports = smtp`) until `release()`: the
 * reference for delivery from a queue.
 */
export interface PostfixRelay { domain: string; port: number }

/**
 * `postfix -c <dir> start` with the recipe's settings: loopback only, the
 * `smtp/inet` service moved to `port` (with `smtpdOptions`, `name=value`, as
 * its own settings), `discard.test` to the discard transport, `mbox.test` to a
 * virtual Maildir owned by nobody.
 */
export async function startPostfix(tools: PostfixTools, port: number, relay?: PostfixRelay, smtpdOptions: string[] = []): Promise<RunningPostfix> {
  // maillog_file must sit under /var (maillog_file_prefixes).
  const base = `/var/tmp/edgemail-pfbench-${process.pid}`;
  const conf = `${base}/conf`;
  const vmail = `${base}/vmail`;
  rmSync(base, { recursive: true, force: true });
  for (const d of [conf, `${base}/queue`, `${base}/data`, vmail]) mkdirSync(d, { recursive: true });
  const postfixUid = Number((await run('id', ['-u', 'postfix'])).stdout.trim());
  chownSync(`${base}/data`, postfixUid, -1);
  chownSync(vmail, 65534, 65534);
  const removeBase = async () => rmSync(base, { recursive: true, force: true });
  const postfixCmd = (...args: string[]) => run(tools.postfix, ['-c', conf, ...args]);
  const postconf = (...args: string[]) => run(tools.postconf, ['-c', conf, ...args]);

  let started = false;
  const stop = async () => {
    if (started) {
      started = false;
      const pid = masterPid(base);
      await postfixCmd('stop').catch(() => {});
      for (let i = 0; i < 100 && pid && alive(pid); i++) await sleep(100);
    }
    await removeBase();
  };
  cleanups.add(stop);
  try {
    const etc = '/etc/postfix';
    await run('cp', [`${etc}/main.cf.proto`, `${conf}/main.cf`]);
    await run('cp', [`${etc}/master.cf.proto`, `${conf}/master.cf`]).catch(() => run('cp', [`${etc}/master.cf`, `${conf}/master.cf`]));
    await postconf('-X', 'html_directory', 'mailq_path', 'manpage_directory', 'newaliases_path', 'readme_directory',
      'sample_directory', 'sendmail_path', 'setgid_group', 'debugger_command');
    await postconf('-e', 'setgid_group = postdrop', 'compatibility_level = 3.6', 'myhostname = pfbench.local',
      `queue_directory = ${base}/queue`, `data_directory = ${base}/data`,
      'inet_interfaces = 127.0.0.1', 'inet_protocols = ipv4', 'mynetworks = 127.0.0.0/8', 'mydestination = localhost',
      'alias_maps =', 'alias_database =', `maillog_file = ${base}/maillog`,
      ...(relay
        ? [`relay_domains = discard.test, ${relay.domain}`, `transport_maps = inline:{ discard.test=discard:, ${relay.domain}=smtp:[127.0.0.1]:${relay.port} }`,
          'defer_transports = smtp', 'smtp_tls_security_level = none']
        : ['relay_domains = discard.test', 'transport_maps = inline:{ discard.test=discard: }']),
      'virtual_mailbox_domains = mbox.test', `virtual_mailbox_base = ${vmail}`,
      'virtual_mailbox_maps = static:bench/', 'virtual_uid_maps = static:65534', 'virtual_gid_maps = static:65534');
    await postconf('-M#', 'smtp/inet');
    // `smtpdOptions` (`-o name=value`, as master.cf writes a service's own settings: `bench submission`'s STARTTLS).
    await postconf('-Me', `127.0.0.1:${port}/inet = 127.0.0.1:${port} inet n - n - - smtpd${smtpdOptions.map((o) => ` -o ${o}`).join('')}`);
    await postconf('-F', '*/*/chroot = n');
    await postfixCmd('check');
    await postfixCmd('start');
    started = true;
    await waitForGreeting(port, 15_000);
  } catch (e) {
    let log = '';
    try { log = readFileSync(`${base}/maillog`, 'utf8').trim().split('\n').slice(-5).join('\n'); } catch { /* none yet */ }
    await stop();
    cleanups.delete(stop);
    const stderr = (e as { stderr?: string }).stderr?.trim();
    throw new Error(`Postfix did not start: ${stderr || (e as Error).message}${log ? `\n${log}` : ''}`);
  }

  const countFiles = (dir: string): number => {
    try {
      return readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? countFiles(`${dir}/${e.name}`) : 1), 0);
    } catch { return 0; }
  };
  const queued = () => ['maildrop', 'incoming', 'active', 'deferred', 'hold'].reduce((n, q) => n + countFiles(`${base}/queue/${q}`), 0);
  return {
    port,
    discardTo: 'bench@discard.test',
    maildirTo: 'bench@mbox.test',
    delivered: () => countFiles(`${vmail}/bench/new`),
    queued,
    async release() {
      await postconf('-e', 'defer_transports =');
      await postfixCmd('reload');
      await run(tools.postfix.replace(/postfix$/, 'postqueue'), ['-c', conf, '-f']);
    },
    async drain(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (queued() > 0) {
        if (Date.now() > deadline) return false;
        await sleep(100);
      }
      return true;
    },
    async stop() {
      await stop();
      cleanups.delete(stop);
    },
  };
}

function masterPid(base: string): number | undefined {
  try { return Number(readFileSync(`${base}/queue/pid/master.pid`, 'utf8').trim()) || undefined; } catch { return undefined; }
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

// ---------------------------------------------------------------- smtp-sink

export interface RunningSink {
  port: number;
  stop(): Promise<void>;
}

/** `smtp-sink -u nobody 127.0.0.1:<port> 256`: answers every command at once, keeps nothing. */
export async function startSmtpSink(tools: PostfixTools, port: number): Promise<RunningSink> {
  const child: ChildProcess = spawn(tools.smtpSink, ['-u', 'nobody', `127.0.0.1:${port}`, '256'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill();
    await exited;
  };
  cleanups.add(stop);
  try {
    await waitForGreeting(port, 5000);
  } catch (e) {
    await stop();
    cleanups.delete(stop);
    throw new Error(`smtp-sink did not start: ${stderr.trim() || (e as Error).message}`);
  }
  return { port, stop: async () => { await stop(); cleanups.delete(stop); } };
}

// ---------------------------------------------------------------- smtp-source

export interface SmtpSourceOptions {
  port: number;
  sessions: number;
  messages: number;
  /** `-d`: keep each session's connection for all its messages. */
  reuse: boolean;
  size: number;
  from: string;
  to: string;
  timeLimitMs: number;
}

export interface SmtpSourceResult {
  messages: number;
  elapsedMs: number;
  perSecond: number;
  /** smtp-source's complaint when it failed or was stopped by the time bound. */
  error?: string;
}

/** Runs smtp-source once and times it from spawn to exit. */
export async function runSmtpSource(tools: PostfixTools, o: SmtpSourceOptions): Promise<SmtpSourceResult> {
  const args = [...(o.reuse ? ['-d'] : []), '-s', String(o.sessions), '-m', String(o.messages), '-l', String(o.size),
    '-f', o.from, '-t', o.to, `127.0.0.1:${o.port}`];
  const start = process.hrtime.bigint();
  const outcome = await run(tools.smtpSource, args, { timeout: o.timeLimitMs, killSignal: 'SIGKILL' })
    .then(() => undefined, (e: { stderr?: string; killed?: boolean; message: string }) =>
      e.killed ? `stopped at the ${o.timeLimitMs / 1000}s time bound` : (e.stderr?.trim() || e.message).split('\n')[0]);
  const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  return outcome
    ? { messages: 0, elapsedMs, perSecond: NaN, error: outcome }
    : { messages: o.messages, elapsedMs, perSecond: o.messages / (elapsedMs / 1000) };
}
