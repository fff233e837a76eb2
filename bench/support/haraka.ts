// Haraka (npm `Haraka`, a root devDependency) as the same-runtime peer of
// `pnpm bench inbound`: one Node process (smtp.ini `nodes=0`, no cluster),
// started from a throwaway config directory the bench writes under /var/tmp,
// on a free loopback port. Plugins: `haraka-plugin-spf` (MAIL FROM and HELO)
// and `haraka-plugin-dkim` (verification), a DMARC check of the bench's own
// (Haraka ships none: `_dmarc.<From domain>` looked up, aligned with the SPF
// or DKIM pass), `rcpt_to.in_host_list` for the bench's domain and
// `queue/discard`.
//
// What makes its checks the relay node's: `bench_dns` (the first plugin)
// points node:dns, which both plugins use, at the bench's DNS server
// (`dns.setServers`, the callback and promise APIs alike) and clears
// `remote.is_private` for each connection, since haraka-plugin-spf skips SPF
// for private and loopback clients and every bench client is 127.0.0.1.
// Haraka keeps no DNS cache (c-ares asks every time) where the node keeps one:
// its lookups cost the bench's DNS server, not Haraka's process.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { waitForGreeting } from './postfix.js';
import { cleanups } from './stack.js';

export interface RunningHaraka {
  port: number;
  /** A recipient in the accepted domain (queued to discard). */
  to: string;
  /** CPU time (user + system, every thread) of Haraka's process so far, ms, from /proc. */
  cpuMs(): number;
  stop(): Promise<void>;
}

/** Haraka's own words on why it stopped: its caught exception when there is one, else its last lines. */
function whyNot(output: string): string {
  const lines = output.trim().split('\n');
  const caught = lines.findIndex((l) => l.includes('Caught exception'));
  return (caught >= 0 ? lines.slice(caught, caught + 2) : lines.slice(-3)).join(' | ');
}

/** The Haraka package's `bin/haraka`, or why it is not there. */
function harakaBin(): string | { missing: string } {
  try {
    const pkg = createRequire(import.meta.url).resolve('Haraka/package.json');
    const bin = join(dirname(pkg), 'bin', 'haraka');
    return existsSync(bin) ? bin : { missing: `no ${bin}` };
  } catch (e) {
    return { missing: `the Haraka package is not installed (${(e as Error).message.split('\n')[0]}); pnpm install` };
  }
}

const DNS_PLUGIN = `// Written by the edgemail bench: Haraka's checks ask the bench's DNS server,
// and a loopback client is checked like any other.
const dns = require('node:dns')
exports.register = function () {
  const servers = [process.env.BENCH_DNS_SERVER]
  dns.setServers(servers)
  dns.promises.setServers(servers)
  this.register_hook('connect_init', 'not_private')
}
exports.not_private = function (next, connection) {
  connection.remote.is_private = false
  connection.remote.is_local = false
  next()
}
`;

const DMARC_PLUGIN = `// Written by the edgemail bench: DMARC as the relay node checks it (RFC 7489,
// relaxed alignment on the registered domain's last two labels), after the
// SPF and DKIM plugins: one TXT lookup of _dmarc.<From domain> a message.
const dns = require('node:dns').promises
exports.register = function () {
  this.register_hook('data_post', 'dmarc')
}
const org = (d) => d.toLowerCase().split('.').slice(-2).join('.')
exports.dmarc = function (next, connection) {
  const txn = connection.transaction
  if (!txn) return next()
  const from = /@([^>\\s]+)/.exec(txn.header.get('From') || '')
  if (!from) { connection.auth_results('dmarc=none'); return next() }
  const domain = from[1].toLowerCase()
  dns.resolveTxt('_dmarc.' + domain).then((rows) => rows.map((r) => r.join('')), () => []).then((records) => {
    const record = records.find((r) => /^v=DMARC1\\b/i.test(r))
    if (!record) { connection.auth_results('dmarc=none header.from=' + domain); return next() }
    const policy = (/;\\s*p=(\\w+)/i.exec(record) || [])[1] || 'none'
    const spf = txn.results.get('spf')
    const spfAligned = spf && spf.result === 'Pass' && spf.domain && org(spf.domain) === org(domain)
    const dkimAligned = (txn.notes.dkim_results || []).some((r) => r.result === 'pass' && org(r.domain) === org(domain))
    const result = spfAligned || dkimAligned ? 'pass' : 'fail'
    txn.results.add(this, { result, policy })
    connection.auth_results('dmarc=' + result + ' (p=' + policy + ') header.from=' + domain)
    connection.loginfo(this, 'dmarc=' + result + ' p=' + policy + ' header.from=' + domain)
    if (result === 'fail' && policy === 'reject') return next(DENY, 'DMARC policy rejects this message')
    next()
  })
}
`;

/**
 * Starts Haraka accepting mail for `domain` on 127.0.0.1:`port`, its checks
 * asking `dnsServer` (`127.0.0.1:<port>`); `{unavailable}` with the reason
 * when it is not installed or does not greet.
 */
export async function startHaraka(o: { port: number; domain: string; dnsServer: string; /** Log at info (each check's result) into this file. */ infoLog?: string }): Promise<RunningHaraka | { unavailable: string }> {
  const bin = harakaBin();
  if (typeof bin !== 'string') return { unavailable: `Haraka skipped: ${bin.missing}` };
  const base = `/var/tmp/edgemail-haraka-${process.pid}-${o.port}`;
  rmSync(base, { recursive: true, force: true });
  for (const d of ['plugins', 'queue']) mkdirSync(join(base, d), { recursive: true });
  // With -c, Haraka reads only that directory's config: start from the package's own, as `haraka -i` does.
  cpSync(join(dirname(bin), '..', 'config'), join(base, 'config'), { recursive: true });
  const files: Record<string, string> = {
    'config/smtp.ini': `listen=127.0.0.1:${o.port}\nnodes=0\ndaemonize=false\n`,
    'config/me': 'haraka.bench.test\n',
    'config/host_list': `${o.domain}\n`,
    'config/plugins': ['bench_dns', 'spf', 'dkim', 'bench_dmarc', 'rcpt_to.in_host_list', 'queue/discard'].join('\n') + '\n',
    'config/log.ini': `[main]\nlevel=${o.infoLog ? 'info' : 'error'}\ntimestamps=false\n`,
    'config/dkim.ini': '[sign]\nenabled=false\n[verify]\nenabled=true\n',
    'plugins/bench_dns.js': DNS_PLUGIN,
    'plugins/bench_dmarc.js': DMARC_PLUGIN,
  };
  for (const [path, text] of Object.entries(files)) writeFileSync(join(base, path), text);

  const child: ChildProcess = spawn(process.execPath, [bin, '-c', base], {
    cwd: base,
    env: { ...process.env, BENCH_DNS_SERVER: o.dnsServer, YES_REALLY_DO_DISCARD: '1', NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Haraka logs to stdout (errors only, log.ini): the last lines name why it did not start.
  let stderr = '';
  const keep = (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
    if (o.infoLog) appendFileSync(o.infoLog, d);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(base, { recursive: true, force: true });
  };
  cleanups.add(stop);
  try {
    await Promise.race([
      waitForGreeting(o.port, 20_000),
      exited.then(() => { throw new Error(`it exited (${child.exitCode ?? child.signalCode})`); }),
    ]);
  } catch (e) {
    await stop();
    cleanups.delete(stop);
    return { unavailable: `Haraka skipped: it did not start: ${(e as Error).message}${stderr.trim() ? `: ${whyNot(stderr)}` : ''}` };
  }
  const pid = child.pid!;
  return {
    port: o.port,
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
