// Where one job goes: the capture directory, a configured SMTP server (the
// project's or the shared pool's), the smarthost, or the recipient domain's
// MX hosts (`mx-lookup.ts`, through the node's resolver, `dns.servers`).
import type { DNSResolver } from 'mailauth';
import { nonPublicRange } from '@edgemail/shared';
import type { OutboundJob, OutboundRoute } from '@edgemail/shared';
import { bounded, hostAddresses, MAX_TARGETS, mxTargets, PlanningCutOff, type DroppedAddress, type RefusedPlan, type SmtpTarget } from './mx-lookup.js';

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

export type DeliveryPlan = SmtpPlan | CapturePlan | RefusedPlan;

/** One bound on the whole MX planning (the MX query, then every host's A/AAAA at once), besides the lease's end. */
export const MX_PLANNING_BOUND_MS = 30_000;

/** How planning is cut short. */
export interface PlanOptions {
  /** Aborted when the lease ends (less its margin) or the node stops: no delivery is planned, the job is deferred. */
  signal?: AbortSignal;
  /** `MX_PLANNING_BOUND_MS` unless a test says otherwise. */
  boundMs?: number;
}

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
  const found = await mxTargets(route.domain, { port: settings.mxPort, allowPrivateMx: settings.allowPrivateMx }, resolve);
  if (found.kind === 'refused') return found;
  return { kind: 'smtp', targets: found.targets, ...mxTls, via: 'mx', ...(found.dropped.length ? { dropped: found.dropped } : {}) };
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
