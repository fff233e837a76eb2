// The recipient domain's mail hosts: its MX records by preference, each
// host's A and AAAA addresses, the domain's own address when it has no MX,
// and only public addresses unless the operator allows private ones. Asked
// through the node's resolver (`dns.servers`); route.ts decides when.
import { isIP } from 'node:net';
import type { DNSResolver } from 'mailauth';
import { nonPublicRange } from '@edgemail/shared';
import type { OutboundOutcome } from '@edgemail/shared';

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

/** No delivery is possible now (deferred) or ever (failed). */
export interface RefusedPlan {
  kind: 'refused';
  outcome: Exclude<OutboundOutcome, 'sent'>;
  reply: string;
}

/** At most this many addresses are tried per job (Postfix's smtp_mx_address_limit is 5). */
export const MAX_TARGETS = 10;
/** At most this many MX hosts (the most preferred) are looked up per job: a tenant's domain may list hundreds. */
export const MAX_MX_HOSTS = 10;

/** What the MX lookup takes from the `outbound.*` settings. */
export interface MxSettings {
  /** `outbound.mx_port`: 25 in production. */
  port: number;
  /** `outbound.allow_private_mx`: keep addresses that are not public. */
  allowPrivateMx?: boolean;
}

/** Thrown inside planning when its signal or bound fires. */
export class PlanningCutOff extends Error {}

/** `resolve`, each answer raced against `signal` (the lookup itself runs out on the resolver's own timeout). */
export function bounded(resolve: DNSResolver, signal: AbortSignal): DNSResolver {
  return (name, rrtype) => {
    if (signal.aborted) return Promise.reject(new PlanningCutOff());
    return new Promise((res, rej) => {
      const cut = () => rej(new PlanningCutOff());
      signal.addEventListener('abort', cut, { once: true });
      resolve(name, rrtype).then(res, rej).finally(() => signal.removeEventListener('abort', cut));
    });
  };
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
export async function mxTargets(
  domain: string, settings: MxSettings, resolve: DNSResolver,
): Promise<{ kind: 'targets'; targets: SmtpTarget[]; dropped: DroppedAddress[] } | RefusedPlan> {
  const name = domain.toLowerCase().replace(/\.$/, '');
  const port = settings.port;
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
export async function hostAddresses(host: string, resolve: DNSResolver): Promise<{ kind: 'list'; list: string[] } | { kind: 'error'; code: string }> {
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

function errorCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
