// Where one job goes: the capture directory, a configured SMTP server (the
// project's or the shared pool's), the smarthost, or the recipient domain's
// MX hosts looked up through the node's resolver (`dns.servers`).
import { isIP } from 'node:net';
import type { DNSResolver } from 'mailauth';
import { nonPublicRange } from '@edgemail/shared';
import type { OutboundJob, OutboundOutcome, OutboundRoute } from '../protocol.js';

/** The `outbound.*` settings that decide a route. */
export interface RouteSettings {
  /** `outbound.capture_dir`: when set, MX-routed mail does not leave the node; the message is written there. */
  captureDir: string;
  /** `outbound.smarthost`: `host:port` that takes MX-routed mail instead of the recipient's MX. */
  smarthost: string;
  /**
   * `outbound.mx_port`: the port of MX hosts (and of a smarthost given without
   * one). Production is always 25 (RFC 5321); only tests point it elsewhere.
   */
  mxPort: number;
  /** `outbound.require_tls`: MX (and smarthost) deliveries defer rather than go without STARTTLS. */
  requireTls: boolean;
  /**
   * `smtp_servers.allow_private_targets`: a project's own SMTP server may be on
   * loopback, RFC 1918 or other reserved space. Off, such a server is refused
   * here too (the edge refuses it at create; DNS may have changed since).
   */
  allowPrivateProjectServers?: boolean;
  /**
   * `outbound.allow_private_mx`: recipient MX hosts (and the A/AAAA fallback)
   * may be on loopback, RFC 1918 or other reserved space. Off (the default),
   * such addresses are dropped: the tenant's DNS names them, the node connects
   * from the operator's network.
   */
  allowPrivateMx?: boolean;
}

/** An MX address left out because it is not public, for the node's log. */
export interface DroppedAddress {
  host: string;
  address: string;
  /** `nonPublicRange`'s words: `loopback`, `private`, `link-local`, `unique local`… */
  range: string;
}

/** One host to try: `host` names it (log, `server`, TLS SNI); `address` is where to connect when already resolved. */
export interface SmtpTarget {
  host: string;
  address: string | null;
  port: number;
}

/** Deliver over SMTP to the first target that answers. */
export interface SmtpPlan {
  kind: 'smtp';
  /** In order; the next is tried only when one cannot be reached. */
  targets: SmtpTarget[];
  /** TLS from the first byte (port 465 style). */
  secure: boolean;
  /** STARTTLS: used when offered, demanded, or never used. Ignored when `secure`. */
  starttls: 'opportunistic' | 'required' | 'never';
  /** What demanded STARTTLS, for the reply when a server does not offer it. */
  requiredBy: 'outbound.require_tls' | 'the SMTP server settings' | null;
  /** Verify the server's certificate (configured servers); MX certificates are not verified, as MTAs do. */
  verifyCertificate: boolean;
  auth: { user: string; pass: string } | null;
  /** The route, for the log. */
  via: 'mx' | 'smarthost' | 'project' | 'pool';
  /** MX addresses left out because they are not public (for the log). */
  dropped?: DroppedAddress[];
}

/** Write the message into `dir` instead of sending it. */
export interface CapturePlan {
  kind: 'capture';
  dir: string;
}

/** No delivery is possible now (deferred) or ever (failed). */
export interface RefusedPlan {
  kind: 'refused';
  outcome: Exclude<OutboundOutcome, 'sent'>;
  reply: string;
}

export type DeliveryPlan = SmtpPlan | CapturePlan | RefusedPlan;

/** At most this many addresses are tried per job (Postfix's smtp_mx_address_limit is 5). */
export const MAX_TARGETS = 10;
/** At most this many MX hosts (the most preferred) are looked up per job: a tenant's domain may list hundreds. */
export const MAX_MX_HOSTS = 10;
/** One bound on the whole MX planning (the MX query, then every host's A/AAAA at once), besides the lease's end. */
export const MX_PLANNING_BOUND_MS = 30_000;

/** How planning is cut short. */
export interface PlanOptions {
  /** Aborted when the lease ends (less its margin) or the node stops: no delivery is planned, the job is deferred. */
  signal?: AbortSignal;
  /** `MX_PLANNING_BOUND_MS` unless a test says otherwise. */
  boundMs?: number;
}

/** Thrown inside planning when its signal or bound fires. */
class PlanningCutOff extends Error {}

/**
 * The plan for one job. Never throws: a DNS failure becomes a refused plan
 * (NXDOMAIN or a null MX fail; a timeout or SERVFAIL defers).
 *
 * @example const plan = await planDelivery(job, settings, createDnsResolver(config['dns.servers']));
 */
export async function planDelivery(job: Pick<OutboundJob, 'route'>, settings: RouteSettings, resolve: DNSResolver, options: PlanOptions = {}): Promise<DeliveryPlan> {
  const route: OutboundRoute = job.route;
  // Capture stands in for the Internet (MX and smarthost), not for a server the project or operator configured.
  if (settings.captureDir && route.kind === 'mx') return { kind: 'capture', dir: settings.captureDir };
  const boundMs = options.boundMs ?? MX_PLANNING_BOUND_MS;
  const bound = AbortSignal.timeout(boundMs);
  const signal = options.signal ? AbortSignal.any([options.signal, bound]) : bound;
  try {
    return await plan(route, settings, bounded(resolve, signal));
  } catch (err) {
    if (!(err instanceof PlanningCutOff)) throw err;
    const why = options.signal?.aborted ? 'the lease ended or the relay node is stopping' : `it took longer than ${boundMs} ms`;
    const what = route.kind === 'mx' ? `MX lookup for ${route.domain}` : `address lookup for SMTP server ${route.host}`;
    return { kind: 'refused', outcome: 'deferred', reply: `${what} cut off: ${why}; tried again later` };
  }
}

async function plan(route: OutboundRoute, settings: RouteSettings, resolve: DNSResolver): Promise<DeliveryPlan> {
  if (route.kind === 'smtp') {
    const verified = route.security !== 'none';
    const targets = route.source === 'project' && !settings.allowPrivateProjectServers
      ? await publicTargets(route.host, route.port, resolve)
      : [{ host: route.host, address: null, port: route.port }];
    if (!Array.isArray(targets)) return targets;
    return {
      kind: 'smtp',
      targets,
      secure: route.security === 'tls',
      starttls: route.security === 'starttls' ? 'required' : route.security === 'none' ? 'never' : 'opportunistic',
      requiredBy: route.security === 'starttls' ? 'the SMTP server settings' : null,
      verifyCertificate: verified,
      auth: route.username ? { user: route.username, pass: route.password ?? '' } : null,
      via: route.source,
    };
  }
  const mxTls = {
    secure: false,
    starttls: settings.requireTls ? 'required' as const : 'opportunistic' as const,
    requiredBy: settings.requireTls ? 'outbound.require_tls' as const : null,
    verifyCertificate: false,
    auth: null,
  };
  if (settings.smarthost) {
    // The operator's own relay: used as configured, whatever its address.
    const { host, port } = parseHostPort(settings.smarthost, settings.mxPort);
    return { kind: 'smtp', targets: [{ host, address: null, port }], ...mxTls, via: 'smarthost' };
  }
  const found = await mxTargets(route.domain, settings, resolve);
  if (found.kind === 'refused') return found;
  return { kind: 'smtp', targets: found.targets, ...mxTls, via: 'mx', ...(found.dropped.length ? { dropped: found.dropped } : {}) };
}

/** `resolve`, each answer raced against `signal` (the lookup itself runs out on the resolver's own timeout). */
function bounded(resolve: DNSResolver, signal: AbortSignal): DNSResolver {
  return (name, rrtype) => {
    if (signal.aborted) return Promise.reject(new PlanningCutOff());
    return new Promise((res, rej) => {
      const cut = () => rej(new PlanningCutOff());
      signal.addEventListener('abort', cut, { once: true });
      resolve(name, rrtype).then(res, rej).finally(() => signal.removeEventListener('abort', cut));
    });
  };
}

/**
 * A project's SMTP server, resolved here and pinned to its addresses, every
 * one of which must be public: the tenant names the host, the node connects
 * from the operator's network. The host stays the TLS name.
 */
async function publicTargets(host: string, port: number, resolve: DNSResolver): Promise<SmtpTarget[] | RefusedPlan> {
  const addresses = await hostAddresses(host, resolve);
  if (addresses.kind === 'error') return { kind: 'refused', outcome: 'deferred', reply: `address lookup for SMTP server ${host} failed: ${addresses.code}` };
  if (!addresses.list.length) return { kind: 'refused', outcome: 'deferred', reply: `SMTP server ${host} has no address record` };
  for (const address of addresses.list) {
    const range = nonPublicRange(address);
    if (range) {
      return {
        kind: 'refused', outcome: 'failed',
        reply: `SMTP server ${host} is at ${address}, a private address (${range}); refused unless smtp_servers.allow_private_targets is set`,
      };
    }
  }
  return addresses.list.slice(0, MAX_TARGETS).map((address) => ({ host, address, port }));
}

interface MxRecord {
  exchange: string;
  priority: number;
}

/**
 * The domain's MX hosts by preference (equal preferences in random order,
 * RFC 5321 section 5.1), the first `MAX_MX_HOSTS` of them looked up at once,
 * each with its addresses (IPv4 first); the domain's own A/AAAA when it has
 * no MX (the "implicit MX"). Unless `outbound.allow_private_mx`, every
 * address that is not public is dropped; a domain left with none fails.
 */
async function mxTargets(
  domain: string, settings: RouteSettings, resolve: DNSResolver,
): Promise<{ kind: 'targets'; targets: SmtpTarget[]; dropped: DroppedAddress[] } | RefusedPlan> {
  const name = domain.toLowerCase().replace(/\.$/, '');
  const port = settings.mxPort;
  let hosts: string[];
  try {
    const records = (await resolve(name, 'MX')) as unknown as MxRecord[];
    // RFC 7505: "0 ." says the domain takes no mail (the resolver names the root "").
    if (records.some((r) => r.exchange === '' || r.exchange === '.')) {
      return { kind: 'refused', outcome: 'failed', reply: 'recipient domain does not accept mail (null MX)' };
    }
    hosts = byPreference(records).slice(0, MAX_MX_HOSTS);
  } catch (err) {
    if (err instanceof PlanningCutOff) throw err;
    const code = errorCode(err);
    if (code === 'ENOTFOUND') return { kind: 'refused', outcome: 'failed', reply: `recipient domain ${name} does not exist (NXDOMAIN)` };
    if (code !== 'ENODATA') return { kind: 'refused', outcome: 'deferred', reply: `MX lookup for ${name} failed: ${code ?? describe(err)}` };
    hosts = [];
  }
  const dropped: DroppedAddress[] = [];
  /** The public addresses of `host` (all of them with `allowPrivateMx`); the rest go to `dropped`. */
  const keep = (host: string, list: string[]): SmtpTarget[] => list.flatMap((address) => {
    const range = settings.allowPrivateMx ? null : nonPublicRange(address);
    if (range) {
      dropped.push({ host, address, range });
      return [];
    }
    return [{ host, address, port }];
  });
  if (!hosts.length) {
    // No MX: the domain's own address is its mail host (RFC 5321 section 5.1).
    const addresses = await hostAddresses(name, resolve);
    if (addresses.kind === 'error') return { kind: 'refused', outcome: 'deferred', reply: `address lookup for ${name} failed: ${addresses.code}` };
    if (!addresses.list.length) return { kind: 'refused', outcome: 'failed', reply: `recipient domain ${name} has no MX and no address record` };
    const targets = keep(name, addresses.list);
    if (!targets.length) return privateOnly(name, dropped);
    return { kind: 'targets', targets: targets.slice(0, MAX_TARGETS), dropped };
  }
  // Every host at once: one slow name server no longer holds up the others.
  const found = await Promise.all(hosts.map((host) => hostAddresses(host, resolve)));
  const targets: SmtpTarget[] = [];
  let lookupError: string | null = null;
  found.forEach((addresses, i) => {
    const host = hosts[i]!;
    if (addresses.kind === 'error') lookupError ??= `address lookup for MX host ${host} failed: ${addresses.code}`;
    else targets.push(...keep(host, addresses.list));
  });
  if (targets.length) return { kind: 'targets', targets: targets.slice(0, MAX_TARGETS), dropped };
  // A host that could not be looked up may yet turn out public: try again later.
  if (lookupError) return { kind: 'refused', outcome: 'deferred', reply: lookupError };
  if (dropped.length) return privateOnly(name, dropped);
  return { kind: 'refused', outcome: 'deferred', reply: `no MX host of ${name} has an address (${hosts.join(', ')})` };
}

/**
 * Every mail host of the domain is on a private or reserved address: failed
 * for good (it is the recipient domain's DNS), naming the rule, never
 * connecting there.
 */
function privateOnly(domain: string, dropped: DroppedAddress[]): RefusedPlan {
  const shown = dropped.slice(0, 3).map((d) => `${d.host} is ${d.address} (${d.range})`).join(', ');
  const more = dropped.length > 3 ? ` and ${dropped.length - 3} more` : '';
  return {
    kind: 'refused',
    outcome: 'failed',
    reply: `recipient domain ${domain} has no public mail host: ${shown}${more}; relay nodes deliver only to public addresses unless outbound.allow_private_mx is set`,
  };
}

/** MX host names, most preferred first; ties shuffled so that equal hosts share the load. */
function byPreference(records: MxRecord[]): string[] {
  const keyed = records.map((r) => ({ host: r.exchange.toLowerCase().replace(/\.$/, ''), priority: r.priority, tie: Math.random() }));
  keyed.sort((a, b) => a.priority - b.priority || a.tie - b.tie);
  return [...new Set(keyed.map((k) => k.host))];
}

/** A and AAAA of `host`, asked at once (an IP literal is its own address). No such name or record is an empty list. */
async function hostAddresses(host: string, resolve: DNSResolver): Promise<{ kind: 'list'; list: string[] } | { kind: 'error'; code: string }> {
  if (isIP(host)) return { kind: 'list', list: [host] };
  const answers = await Promise.allSettled((['A', 'AAAA'] as const).map((type) => resolve(host, type)));
  const list: string[] = [];
  let failure: string | null = null;
  for (const answer of answers) {
    if (answer.status === 'fulfilled') {
      list.push(...(answer.value as unknown as string[]));
      continue;
    }
    if (answer.reason instanceof PlanningCutOff) throw answer.reason;
    const code = errorCode(answer.reason);
    if (code !== 'ENOTFOUND' && code !== 'ENODATA') failure ??= code ?? describe(answer.reason);
  }
  // A transient failure only matters when nothing was found.
  if (!list.length && failure) return { kind: 'error', code: failure };
  return { kind: 'list', list: [...new Set(list)] };
}

/** `host:port`, `[v6]:port`, or a bare host (then `defaultPort`). */
export function parseHostPort(text: string, defaultPort: number): { host: string; port: number } {
  const value = text.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) return { host: bracketed[1]!, port: bracketed[2] ? Number(bracketed[2]) : defaultPort };
  const colon = value.lastIndexOf(':');
  if (colon > 0 && value.indexOf(':') === colon && /^\d+$/.test(value.slice(colon + 1))) {
    return { host: value.slice(0, colon), port: Number(value.slice(colon + 1)) };
  }
  return { host: value, port: defaultPort };
}

function errorCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
