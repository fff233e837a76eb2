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

/**
 * The plan for one job. Never throws: a DNS failure becomes a refused plan
 * (NXDOMAIN or a null MX fail; a timeout or SERVFAIL defers).
 *
 * @example const plan = await planDelivery(job, settings, createDnsResolver(config['dns.servers']));
 */
export async function planDelivery(job: Pick<OutboundJob, 'route'>, settings: RouteSettings, resolve: DNSResolver): Promise<DeliveryPlan> {
  const route: OutboundRoute = job.route;
  // Capture stands in for the Internet (MX and smarthost), not for a server the project or operator configured.
  if (settings.captureDir && route.kind === 'mx') return { kind: 'capture', dir: settings.captureDir };
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
    const { host, port } = parseHostPort(settings.smarthost, settings.mxPort);
    return { kind: 'smtp', targets: [{ host, address: null, port }], ...mxTls, via: 'smarthost' };
  }
  const found = await mxTargets(route.domain, settings.mxPort, resolve);
  if (found.kind === 'refused') return found;
  return { kind: 'smtp', targets: found.targets, ...mxTls, via: 'mx' };
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
 * RFC 5321 section 5.1), each with its addresses (IPv4 first); the domain's
 * own A/AAAA when it has no MX (the "implicit MX").
 */
async function mxTargets(domain: string, port: number, resolve: DNSResolver): Promise<{ kind: 'targets'; targets: SmtpTarget[] } | RefusedPlan> {
  const name = domain.toLowerCase().replace(/\.$/, '');
  let hosts: string[];
  try {
    const records = (await resolve(name, 'MX')) as unknown as MxRecord[];
    // RFC 7505: "0 ." says the domain takes no mail (the resolver names the root "").
    if (records.some((r) => r.exchange === '' || r.exchange === '.')) {
      return { kind: 'refused', outcome: 'failed', reply: 'recipient domain does not accept mail (null MX)' };
    }
    hosts = byPreference(records);
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ENOTFOUND') return { kind: 'refused', outcome: 'failed', reply: `recipient domain ${name} does not exist (NXDOMAIN)` };
    if (code !== 'ENODATA') return { kind: 'refused', outcome: 'deferred', reply: `MX lookup for ${name} failed: ${code ?? describe(err)}` };
    hosts = [];
  }
  if (!hosts.length) {
    // No MX: the domain's own address is its mail host (RFC 5321 section 5.1).
    const addresses = await hostAddresses(name, resolve);
    if (addresses.kind === 'error') return { kind: 'refused', outcome: 'deferred', reply: `address lookup for ${name} failed: ${addresses.code}` };
    if (!addresses.list.length) return { kind: 'refused', outcome: 'failed', reply: `recipient domain ${name} has no MX and no address record` };
    return { kind: 'targets', targets: addresses.list.slice(0, MAX_TARGETS).map((address) => ({ host: name, address, port })) };
  }
  const targets: SmtpTarget[] = [];
  let lookupError: string | null = null;
  for (const host of hosts) {
    if (targets.length >= MAX_TARGETS) break;
    const addresses = await hostAddresses(host, resolve);
    if (addresses.kind === 'error') {
      lookupError ??= `address lookup for MX host ${host} failed: ${addresses.code}`;
      continue;
    }
    for (const address of addresses.list) targets.push({ host, address, port });
  }
  if (targets.length) return { kind: 'targets', targets: targets.slice(0, MAX_TARGETS) };
  return { kind: 'refused', outcome: 'deferred', reply: lookupError ?? `no MX host of ${name} has an address (${hosts.join(', ')})` };
}

/** MX host names, most preferred first; ties shuffled so that equal hosts share the load. */
function byPreference(records: MxRecord[]): string[] {
  const keyed = records.map((r) => ({ host: r.exchange.toLowerCase().replace(/\.$/, ''), priority: r.priority, tie: Math.random() }));
  keyed.sort((a, b) => a.priority - b.priority || a.tie - b.tie);
  return [...new Set(keyed.map((k) => k.host))];
}

/** A and AAAA of `host` (an IP literal is its own address). No such name or record is an empty list. */
async function hostAddresses(host: string, resolve: DNSResolver): Promise<{ kind: 'list'; list: string[] } | { kind: 'error'; code: string }> {
  if (isIP(host)) return { kind: 'list', list: [host] };
  const list: string[] = [];
  let failure: string | null = null;
  for (const type of ['A', 'AAAA'] as const) {
    try {
      list.push(...((await resolve(host, type)) as unknown as string[]));
    } catch (err) {
      const code = errorCode(err);
      if (code !== 'ENOTFOUND' && code !== 'ENODATA') failure ??= code ?? describe(err);
    }
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
