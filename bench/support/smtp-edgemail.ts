// The "edgemail" target of `pnpm bench inbound`: the real pipeline. A
// throwaway local stack (PostgreSQL, bridge, Worker) with one enrolled relay
// node listening for inbound mail, a project that registered a domain, and a
// count of the inbound_emails rows the forwarder has written.
//
// The stack is started with `inboundPort`; when it starts a relay node itself
// (found on the returned stack, or as whatever greets on that port), that
// node is measured. Otherwise the bench enrols one like an operator would
// (a project key holding relay:write) and starts it in a process of its own
// with the relay node's `startRelayNode`. When that cannot be done either, the
// target reports "relay node not available yet" and the rest still runs.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import pg from 'pg';
import { envName, settings as declared } from '@edgemail/shared';
import { repoRoot } from '../../edge/local/edge-worker.js';
import { startStack, type Stack, type StackOptions } from '../../edge/local/stack.js';
import { freePort, waitForGreeting } from './postfix.js';
import { startRelayNodeProcess, type RelayNodeProcess } from './relay-node-process.js';
import { bootstrap, cleanups } from './stack.js';

export const NODE_NOT_AVAILABLE = 'relay node not available yet';

export interface EdgemailInbound {
  port: number;
  /** `bench@<the registered domain>`. */
  to: string;
  /** How the domain was registered: over the API, or into the table when the route is not there yet. */
  domainVia: 'POST /api/v1/domains' | 'INSERT INTO domains';
  /** Who started the relay node: the local stack, or the bench (enrolled with a relay:write key). */
  nodeFrom: 'the local stack' | 'the bench';
  /** inbound_emails rows of the bench project. */
  stored(): Promise<number>;
  /**
   * Waits (at most `timeoutMs`) until `expected` rows are there; the count, the
   * time waited and when (Date.now()) the count was first seen at `expected`,
   * looked at every 50 ms.
   */
  drain(expected: number, timeoutMs: number): Promise<{ stored: number; waitedMs: number; doneAt?: number }>;
  /** CPU time of the relay node's process so far, when the bench started it. */
  cpuUsage?: () => Promise<NodeJS.CpuUsage>;
  /**
   * One more relay node for the same edge and project, with other settings
   * (another greeting delay), stopped with the stack. Only when the bench
   * started the first node: a node the stack starts has the stack's settings.
   */
  startNode?: (settings: Record<string, string>) => Promise<{ port: number; cpuUsage(): Promise<NodeJS.CpuUsage> }>;
  /**
   * Gives the bench project `n` inbound routing rules (docs/inbound-rules.md)
   * that none of its messages match, so every message is tried against all of
   * them (refusals on the node, the rest at ingest), then waits `settleMs` for
   * the node's next domain list. Absent when the checkout has no rules table.
   */
  addRoutingRules?: (n: number, settleMs: number) => Promise<void>;
  /** Removes the rules addRoutingRules gave, then waits `settleMs` for the node's next domain list. */
  removeRoutingRules?: (settleMs: number) => Promise<void>;
}

export type EdgemailOutcome = { target: EdgemailInbound } | { unavailable: string };

/**
 * Settings of the bench stack: the greeting delay under test, no per-address
 * session rate or cap (every client is 127.0.0.1), the node's forwarding limit far
 * above what a run sends (a runaway guard, not a throughput cap), and the
 * bench's DNS server for SPF/DKIM/DMARC, plus an encryption key as `pnpm dev`
 * has. Settings this checkout does not declare yet are left out (and named).
 */
export function edgemailSettings(greetingDelayMs: number, dnsServer: string): { settings: Record<string, string>; skipped: string[] } {
  return declaredOnly({
    ...greetingDelay(greetingDelayMs),
    'relay_node.inbound.rate_per_minute': '0',
    'inbound.rate_per_minute': '0',
    'relay_node.inbound.max_sessions_per_ip': '0',
    'inbound.max_sessions_per_ip': '0',
    'ratelimit.relay_node_inbound_per_minute': '1000000000',
    'dns.servers': dnsServer,
    // What `pnpm dev` makes for itself: the listener certificate's private half is sealed with it.
    'database.crypto.encryption_key': randomBytes(32).toString('base64'),
  });
}

/** `settings` with another greeting delay on the relay node's listener. */
export function withGreetingDelay(settings: Record<string, string>, greetingDelayMs: number): Record<string, string> {
  return { ...settings, ...declaredOnly(greetingDelay(greetingDelayMs)).settings };
}

const greetingDelay = (ms: number) => ({ 'relay_node.inbound.greeting_delay': `${ms}ms`, 'inbound.greeting_delay': `${ms}ms` });

/** As SERVICE_* variables, leaving out (and naming) settings this checkout does not declare: the stack refuses unknown ones. */
function declaredOnly(wanted: Record<string, string>): { settings: Record<string, string>; skipped: string[] } {
  const settings: Record<string, string> = {};
  const skipped: string[] = [];
  for (const [name, value] of Object.entries(wanted)) {
    if (name in declared) settings[envName(name)] = value;
    else skipped.push(name);
  }
  return { settings, skipped };
}

/** Starts the stack, registers `domain` for a fresh project, runs `fn`, and stops everything. */
export async function withEdgemailInbound<T>(
  settings: Record<string, string>,
  domain: string,
  fn: (outcome: EdgemailOutcome) => Promise<T>,
): Promise<T> {
  const dataDir = `${repoRoot}.data/bench-inbound-${process.pid}`;
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  let stack: Stack | undefined;
  const nodes: RelayNodeProcess[] = [];
  let db: pg.Client | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await Promise.all(nodes.map((n) => n.stop()));
      await db?.end().catch(() => {});
      await stack?.stop();
      if (stack) rmSync(stack.postgres.dataDir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    })();
    return stopping;
  };
  cleanups.add(stop);
  try {
    const [pgPort, workerPort, inboundPort] = [await freePort(), await freePort(), await freePort()];
    // `inboundPort` is the relay node's listener once the stack starts one (see the header).
    const options = { dataDir, pgPort, workerPort, settings, logLevel: 'error', inboundPort } as StackOptions & { inboundPort: number };
    stack = await startStack(options);
    const tenant = await bootstrap(stack);
    const domainVia = await registerDomain(stack, tenant.platformToken, tenant.projectId, domain);

    const s = stack;
    const startNode = async (nodeSettings: Record<string, string>) => {
      const started = await startNodeOfProject(s, tenant.platformToken, tenant.projectId, `${dataDir}/relay-node-${nodes.length}`, nodeSettings);
      if (!('unavailable' in started)) nodes.push(started);
      return started;
    };
    let port = await relayNodePort(stack, inboundPort);
    const nodeFrom: EdgemailInbound['nodeFrom'] = port === undefined ? 'the bench' : 'the local stack';
    let cpuUsage: EdgemailInbound['cpuUsage'];
    if (port === undefined) {
      const started = await startNode(settings);
      if ('unavailable' in started) return await fn(started);
      port = started.port;
      cpuUsage = started.cpuUsage;
    }

    db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    const client = db;
    const stored = async () => {
      const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM inbound_emails WHERE project_id = $1', [tenant.projectId]);
      return rows[0]!.n;
    };
    return await fn({
      target: {
        port,
        to: `bench@${domain}`,
        domainVia,
        nodeFrom,
        stored,
        cpuUsage,
        addRoutingRules: (n, settleMs) => addRoutingRules(client, tenant.projectId, domain, n, settleMs),
        removeRoutingRules: async (settleMs) => {
          await client.query(`DELETE FROM inbound_rules WHERE project_id = $1 AND name LIKE 'bench-%'`, [tenant.projectId]);
          await new Promise((r) => setTimeout(r, settleMs));
        },
        startNode: nodeFrom === 'the bench'
          ? async (nodeSettings) => {
            const started = await startNode(nodeSettings);
            if ('unavailable' in started) throw new Error(started.unavailable);
            return started;
          }
          : undefined,
        async drain(expected, timeoutMs) {
          const start = Date.now();
          let n = await stored();
          while (n < expected && Date.now() - start < timeoutMs) {
            await new Promise((r) => setTimeout(r, 50));
            n = await stored();
          }
          const doneAt = n >= expected ? Date.now() : undefined;
          return { stored: n, waitedMs: Date.now() - start, doneAt };
        },
      },
    });
  } finally {
    await stop();
    cleanups.delete(stop);
  }
}

/**
 * A relay node enrolled with a fresh relay:write key of the project and
 * started in a child process.
 */
async function startNodeOfProject(
  stack: Stack, token: string, projectId: string, stateDir: string, settings: Record<string, string>,
): Promise<RelayNodeProcess | { unavailable: string }> {
  const entry = new URL('../../relay-node/src/index.ts', import.meta.url);
  if (!existsSync(entry)) return { unavailable: `${NODE_NOT_AVAILABLE} (no relay-node/src/index.ts)` };
  const { token: key } = await api<{ token: string }>(stack, 'POST', '/api/v1/api-keys', token, projectId, { name: 'bench-relay', permissions: ['relay:write'] });
  const started = await startRelayNodeProcess(stack.url, key, stateDir, settings);
  return 'error' in started ? { unavailable: `${NODE_NOT_AVAILABLE}: ${started.error}` } : started;
}

/** The relay node's inbound port: named on the stack, or greeting on the port the stack was given. */
async function relayNodePort(stack: Stack, asked: number): Promise<number | undefined> {
  const s = stack as unknown as Record<string, unknown>;
  if (typeof s.inboundPort === 'number') return s.inboundPort;
  for (const key of ['relayNode', 'relay', 'node', 'inbound']) {
    const v = s[key];
    if (!v || typeof v !== 'object') continue;
    const o = v as Record<string, unknown>;
    for (const p of ['inboundPort', 'port']) if (typeof o[p] === 'number') return o[p];
  }
  try {
    await waitForGreeting(asked, 1500);
    return asked;
  } catch {
    return undefined;
  }
}

/**
 * POST /api/v1/domains as the project's owner (straight into the table while
 * the route is not there), then its ownership marked proven in the table: the
 * bench measures the mail path, not the DNS proof (docs/inbound.md), and a
 * node serves proven domains only.
 */
async function registerDomain(stack: Stack, token: string, projectId: string, name: string): Promise<EdgemailInbound['domainVia']> {
  let via: EdgemailInbound['domainVia'] = 'POST /api/v1/domains';
  try {
    await api(stack, 'POST', '/api/v1/domains', token, projectId, { name });
  } catch (e) {
    if (!(e instanceof ApiError) || (e.status !== 404 && e.status !== 405)) throw e;
    via = 'INSERT INTO domains';
  }
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  await client.connect();
  try {
    if (via === 'INSERT INTO domains') await client.query('INSERT INTO domains (project_id, name) VALUES ($1, $2)', [projectId, name]);
    await client.query('UPDATE domains SET ownership_proven_at = now() WHERE project_id = $1 AND name = $2', [projectId, name]);
  } finally {
    await client.end();
  }
  return via;
}

class ApiError extends Error {
  constructor(readonly status: number, message: string) { super(message); }
}

/** One call to the API with the platform credential acting as owner in `projectId`. */
async function api<T = unknown>(stack: Stack, method: string, path: string, token: string, projectId: string, body: unknown): Promise<T> {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'X-Service-Project-Id': projectId },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new ApiError(res.status, `${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** `n` rules of four shapes (recipient glob, subject glob, sender regex, header and verdict) that the bench's messages never match. */
async function addRoutingRules(client: pg.Client, projectId: string, domain: string, n: number, settleMs: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const [match, action] = [
      [{ recipient: `nobody-${i}@${domain}` }, 'refuse'],
      [{ subject: `*never-${i}*` }, 'drop'],
      [{ sender: { regex: `^nobody-${i}-\\d+@` } }, 'store'],
      [{ header: { name: 'x-never', pattern: `v${i}` }, dmarc: ['fail'] }, 'drop'],
    ][i % 4]!;
    await client.query(
      `INSERT INTO inbound_rules (project_id, position, name, match, action, refuse_text) VALUES ($1, $2, $3, $4, $5, $6)`,
      [projectId, i + 1, `bench-${i}`, JSON.stringify(match), action, action === 'refuse' ? 'bench refusal' : null],
    );
  }
  await new Promise((r) => setTimeout(r, settleMs));
}
