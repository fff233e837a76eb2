// `pnpm dev`'s ports, checked before anything starts: a taken one stops the
// start at once with one line naming the port, the setting that moves it and,
// when /proc tells (Linux), the process holding it. Without the check a taken
// Worker port left wrangler waiting for ever, and a taken SMTP port ended in
// a stack trace.
import { createSocket } from 'node:dgram';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { processInfo } from './stack-processes.js';

/** One port the stack binds on 127.0.0.1, and the setting that moves it. */
export interface StackPort {
  port: number;
  setting: string;
  /** UDP as well as TCP (the local DNS). */
  udp?: boolean;
}

/** A port of the stack something else holds; the message is the whole line, without `edgemail: `. */
export class PortInUseError extends Error {
  constructor(readonly port: number, readonly setting: string, holder: { pid: number; name: string } | null, denied = false) {
    super(denied
      ? `port ${port} (${setting}) cannot be opened by this user: set ${setting} to a port above 1023`
      : `port ${port} (${setting}) is in use${holder ? ` by pid ${holder.pid} (${holder.name})` : ''}: stop it or set ${setting} to another port`);
  }
}

/** Why `port` cannot be bound on `host` now (EADDRINUSE, EACCES), or null when it can: a listen that is closed at once. */
export function probePort(port: number, host: string, udp = false): Promise<string | null> {
  return new Promise((resolve) => {
    const failed = (e: NodeJS.ErrnoException) => resolve(e.code ?? 'EADDRINUSE');
    if (udp) {
      const socket = createSocket('udp4');
      socket.once('error', (e) => { socket.close(); failed(e); });
      socket.bind(port, host, () => socket.close(() => resolve(null)));
      return;
    }
    const server = createServer();
    server.once('error', failed);
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(null)));
  });
}

/**
 * The process holding `port` (a TCP listener, or a UDP socket), best effort:
 * the socket's inode from /proc/net/{tcp,tcp6,udp,udp6}, then the process
 * with that inode among its open files. Null when unknown (another user's
 * process, no /proc).
 */
export function portHolder(port: number, udp = false): { pid: number; name: string } | null {
  const inodes = new Set<string>();
  for (const table of udp ? ['udp', 'udp6'] : ['tcp', 'tcp6']) {
    let text: string;
    try { text = readFileSync(`/proc/net/${table}`, 'utf8'); } catch { continue; }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN (for UDP, 07 is an unconnected socket).
      if (f.length < 10 || parseInt(f[1]!.split(':')[1]!, 16) !== port) continue;
      if (f[3] !== (udp ? '07' : '0A')) continue;
      if (f[9] !== '0') inodes.add(f[9]!);
    }
  }
  if (inodes.size === 0) return null;
  let pids: string[];
  try { pids = readdirSync('/proc').filter((e) => /^\d+$/.test(e)); } catch { return null; }
  for (const pid of pids) {
    let fds: string[];
    try { fds = readdirSync(`/proc/${pid}/fd`); } catch { continue; }
    for (const fd of fds) {
      let target: string;
      try { target = readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { continue; }
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m && inodes.has(m[1]!)) {
        const info = processInfo(Number(pid));
        return info ? { pid: info.pid, name: info.name } : null;
      }
    }
  }
  return null;
}

/** Two settings naming one port: the second part to start would find it taken by the first. */
export class PortNamedTwiceError extends Error {
  constructor(readonly port: number, first: string, second: string) {
    super(`port ${port} is set for both ${first} and ${second}: give each its own port`);
  }
}

/**
 * The first of `ports` (0 = a free one chosen later: not checked) that is
 * named by two settings or cannot be bound on `host`, as an error; null when all can.
 */
export async function takenPort(ports: StackPort[], host = '127.0.0.1'): Promise<PortInUseError | PortNamedTwiceError | null> {
  const named = new Map<number, string>();
  for (const p of ports) {
    if (!p.port) continue;
    const first = named.get(p.port);
    if (first) return new PortNamedTwiceError(p.port, first, p.setting);
    named.set(p.port, p.setting);
  }
  for (const p of ports) {
    if (!p.port) continue;
    for (const udp of p.udp ? [false, true] : [false]) {
      const why = await probePort(p.port, host, udp);
      if (why) return new PortInUseError(p.port, p.setting, why === 'EACCES' ? null : portHolder(p.port, udp), why === 'EACCES');
    }
  }
  return null;
}

/** Whether a start-up failure is a port someone took between the check and the bind. */
export const isAddressInUse = (e: unknown): boolean =>
  (e as { code?: string } | null)?.code === 'EADDRINUSE' || /EADDRINUSE|Address already in use/i.test(String((e as Error | null)?.message ?? e));

const envPort = (env: NodeJS.ProcessEnv, name: string, fallback: number) => Number(env[name] ?? fallback);

/** The ports `pnpm dev` binds, from its `EDGEMAIL_*_PORT` variables (docs/local-stack.md). */
export function devPorts(env: NodeJS.ProcessEnv) {
  return {
    pgPort: envPort(env, 'EDGEMAIL_PG_PORT', 54329),
    bridgePort: envPort(env, 'EDGEMAIL_BRIDGE_PORT', 54330),
    workerPort: envPort(env, 'EDGEMAIL_PORT', 8787),
    inboundPort: envPort(env, 'EDGEMAIL_INBOUND_PORT', 2525),
    // Submission (docs/submission.md): STARTTLS, AUTH with a project API key; plain-text AUTH from loopback.
    submissionPort: envPort(env, 'EDGEMAIL_SUBMISSION_PORT', 2587),
    // The local DNS as ordinary DNS (UDP and TCP), for the relay node's checks, dig and opendkim.
    dnsPort: envPort(env, 'EDGEMAIL_DNS_PORT', 5354),
  };
}

/** The same, each with its variable, for `takenPort` (the DNS port only when the local DNS runs). */
export function devPortList(env: NodeJS.ProcessEnv): StackPort[] {
  const p = devPorts(env);
  return [
    { port: p.workerPort, setting: 'EDGEMAIL_PORT' },
    { port: p.pgPort, setting: 'EDGEMAIL_PG_PORT' },
    { port: p.bridgePort, setting: 'EDGEMAIL_BRIDGE_PORT' },
    { port: p.inboundPort, setting: 'EDGEMAIL_INBOUND_PORT' },
    { port: p.submissionPort, setting: 'EDGEMAIL_SUBMISSION_PORT' },
    ...(env.SERVICE_DNS_DOH_URL ? [] : [{ port: p.dnsPort, setting: 'EDGEMAIL_DNS_PORT', udp: true }]),
  ];
}
