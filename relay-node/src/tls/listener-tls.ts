// The certificates the node's listeners present, from the edge's bundle
// (`GET /relay/v1/certificates`, docs/relay-protocol.md): fetched at start,
// then polled every 15 s with the generation held (a 304 costs the edge one
// row), and resolved per handshake and per listener by the spec's order
// (resolve-certificate.ts). When the installation has no self-signed pair yet,
// or it is within 30 days of its end, the node makes one and offers it (PUT),
// so every node converges on the one the edge stored first.
import type { SecureContext } from 'node:tls';
import { createSecureContext } from 'node:tls';
import { Backoff, sleep } from '../edge/backoff.js';
import type { EdgeClient } from '../edge/client.js';
import { retrying } from '../edge/retry.js';
import { EdgeRefusedError, isFatalEdgeError } from '../edge/errors.js';
import type { CertificateBundle, PresentedCertificate, TlsReport } from '@edgemail/shared';
import type { Log } from '../log.js';
import { createCertificateContexts, type LoadedCertificate } from './certificate-contexts.js';
import { acmeHostsServed, resolveCertificate, type AcmeChoice, type Resolvable } from './resolve-certificate.js';
import { certificateNames, generateSelfSigned } from './self-signed.js';

/**
 * A listener that takes a new default context (clients without SNI) while it
 * runs: smtp-server's `secureContext` map, keyed `'*'`.
 */
export interface TakesSecureContext {
  readonly secureContext: Map<string, SecureContext>;
}

/** The certificate a listener starts with: a default context and the per-handshake choice (SNI). */
export interface PresentedTls {
  secureContext: SecureContext;
  SNICallback: (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void) => void;
}

/** The spec: an assignment takes effect within 30 s; polling at half that leaves room for one failed poll. */
export const DEFAULT_POLL_INTERVAL_MS = 15_000;
/** The self-signed pair is renewed (a fresh one offered) this close to its end. */
export const SELF_SIGNED_RENEWAL_DAYS = 30;
const LISTENERS = ['inbound', 'submission'] as const;
/** After an offer that did not take (the edge kept the old pair), the next try waits this long. */
const OFFER_RETRY_MS = 10 * 60_000;

export interface ListenerTlsOptions {
  edge: Pick<EdgeClient, 'certificates' | 'offerSelfSigned'>;
  /** `server.public_url`: its host names the self-signed pair. */
  publicUrl: string;
  /** `acme.enabled` and `acme.hosts`: step (2) only for those names. */
  acme?: { enabled: boolean; hosts: readonly string[] };
  log: Log;
  /** Told when the edge revokes the node or refuses its credential. */
  onFatal?: (err: Error) => void;
  /** How long start-up waits for the edge before presenting a stand-in pair, ms. Default 10000. */
  startupTimeoutMs?: number;
  /** Poll period of the bundle, ms. Default DEFAULT_POLL_INTERVAL_MS (15 s). */
  pollIntervalMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

export interface ListenerTls {
  /** Gets the bundle (or makes a stand-in when the edge cannot be reached in time) and starts polling. */
  start(): Promise<void>;
  /** For a server's `tls` option: `listener`'s default context and its per-handshake choice. */
  forListener(listener: string): PresentedTls;
  /** Keeps `server`'s default context (clients without SNI) in step with what `listener` presents. */
  attach(listener: string, server: TakesSecureContext): void;
  /** What `listener` presents to a client without SNI, for its heartbeat report. */
  presented(listener: string): PresentedCertificate;
  /** The heartbeat's node-wide `tls` object (the first listener's; `stand_in` while the edge's bundle has not come). */
  report(listener?: string): TlsReport;
  /** The bundle's generation held, null before the first. */
  generation(): number | null;
  stop(): void;
}

/**
 * @example
 * const tls = createListenerTls({ edge, publicUrl: config['server.public_url'], acme, log });
 * await tls.start();
 * const server = createInboundServer(deps, { ...options, tls: tls.forListener('inbound') });
 * tls.attach('inbound', server);
 */
export function createListenerTls(options: ListenerTlsOptions): ListenerTls {
  const names = certificateNames(options.publicUrl);
  const now = options.now ?? Date.now;
  const acme: AcmeChoice = {
    enabled: options.acme?.enabled ?? false,
    hosts: new Set((options.acme?.hosts ?? []).map((h) => h.toLowerCase())),
  };
  const contexts = createCertificateContexts(options.log);
  const stopping = new AbortController();
  const servers: { listener: string; server: TakesSecureContext }[] = [];
  let current: Resolvable | null = null;
  let standIn: { context: SecureContext; notAfter: string } | null = null;
  // What each listener presented last to clients without SNI: kept when a bundle has nothing that loads.
  const defaults = new Map<string, { source: string; certificate: LoadedCertificate | null; context: SecureContext }>();
  let lastOfferAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  let polling = false;

  /** (1) else (3), else what it presented before (a stand-in at worst). */
  const defaultFor = (listener: string) => {
    const resolved = current ? resolveCertificate(current, listener, undefined, acme) : null;
    if (resolved) return { source: resolved.source, certificate: resolved.certificate, context: resolved.certificate.context };
    return defaults.get(listener) ?? (standIn ? { source: 'stand_in', certificate: null, context: standIn.context } : null);
  };

  const refreshDefaults = () => {
    for (const listener of new Set([...defaults.keys(), ...servers.map((s) => s.listener)])) {
      const chosen = defaultFor(listener);
      if (!chosen) continue;
      const before = defaults.get(listener);
      defaults.set(listener, chosen);
      if (before?.context !== chosen.context) {
        options.log.info('listener certificate in use', { listener, source: chosen.source, certificate: chosen.certificate?.name ?? null, not_after: chosen.certificate?.notAfter ?? standIn?.notAfter ?? null });
      }
    }
    for (const { listener, server } of servers) {
      const chosen = defaults.get(listener);
      if (chosen) server.secureContext.set('*', chosen.context);
    }
  };

  const adopt = (bundle: CertificateBundle) => {
    current = { bundle, loaded: contexts.load(bundle) };
    refreshDefaults();
  };

  /** No self-signed pair yet, or one within 30 days of its end. */
  const wantsSelfSigned = (bundle: CertificateBundle): boolean => {
    const pair = bundle.self_signed ? bundle.certificates[bundle.self_signed] : undefined;
    if (!pair) return true;
    return Date.parse(pair.not_after) - now() < SELF_SIGNED_RENEWAL_DAYS * 86_400_000;
  };

  /** Offers a fresh pair when the bundle wants one (a renewal at most every OFFER_RETRY_MS); true when it offered. */
  const renewSelfSigned = async (bundle: CertificateBundle, signal: AbortSignal): Promise<boolean> => {
    if (!wantsSelfSigned(bundle)) return false;
    if (bundle.self_signed && now() - lastOfferAt < OFFER_RETRY_MS) return false;
    options.log.info(bundle.self_signed ? 'the shared self-signed pair ends within 30 days: offering a fresh one to the edge' : 'no self-signed pair yet: generating it and offering it to the edge', { names });
    const pair = await generateSelfSigned(names, new Date(now()));
    await options.edge.offerSelfSigned({ certificate: pair.certificate, private_key: pair.private_key }, signal);
    lastOfferAt = now();
    return true;
  };

  /**
   * Fetches the bundle (unless unchanged since `holding`), then renews the
   * self-signed pair when it must (checked on every poll: time passes while
   * the bundle stays the same) and fetches the bundle holding it.
   */
  const sync = async (holding: number | null, signal: AbortSignal): Promise<void> => {
    const bundle = await options.edge.certificates(holding, signal);
    // Adopted first: a failed offer must not keep a new assignment from being presented.
    if (bundle) adopt(bundle);
    if (current && await renewSelfSigned(current.bundle, signal)) {
      const renewed = await options.edge.certificates(null, signal);
      if (renewed) adopt(renewed);
    }
  };

  const fatal = (err: unknown): boolean => {
    if (!isFatalEdgeError(err)) return false;
    options.onFatal?.(err);
    return true;
  };

  /** After a stand-in start: keep asking (with backoff) until the edge answers. */
  const keepTrying = async () => {
    // The start-up tries just failed: the first try here waits a step too.
    const backoff = new Backoff();
    if (!(await sleep(backoff.next(), stopping.signal))) return;
    try {
      await retrying(() => sync(null, stopping.signal), {
        signal: stopping.signal,
        backoff,
        // Whatever failed (the edge, making or offering the pair), a revoked node aside, may pass later.
        retryable: () => true,
        onRetry: (err) => options.log.warn('listener certificates still not available from the edge', { error: String(err) }),
      });
    } catch (err) {
      fatal(err); // else stop() ended the wait
    }
  };

  const poll = async () => {
    if (polling || !current) return;
    polling = true;
    try {
      await sync(current.bundle.generation, stopping.signal);
    } catch (err) {
      if (!fatal(err) && !stopping.signal.aborted) options.log.warn('listener certificate poll failed; keeping the current ones', { error: String(err) });
    } finally {
      polling = false;
    }
  };

  const presented = (listener: string): PresentedCertificate => {
    const chosen = defaults.get(listener) ?? defaultFor(listener);
    if (!chosen) return { source: 'none', certificate: null, not_after: null };
    const hosts = current ? acmeHostsServed(current, listener, acme) : [];
    return {
      source: chosen.source,
      certificate: chosen.certificate?.name ?? null,
      not_after: chosen.certificate?.notAfter ?? standIn?.notAfter ?? null,
      ...(hosts.length ? { acme_hosts: hosts } : {}),
    };
  };

  return {
    async start() {
      const deadline = AbortSignal.any([stopping.signal, AbortSignal.timeout(options.startupTimeoutMs ?? 10_000)]);
      try {
        await retrying(() => sync(null, deadline), { signal: deadline });
        const from = current as Resolvable | null;
        if (!from || !LISTENERS.every((l) => resolveCertificate(from, l, undefined, acme))) throw new Error('the edge\'s bundle has no certificate that loads for every listener');
      } catch (err) {
        if (isFatalEdgeError(err)) throw err;
        // Present a pair of our own meanwhile: STARTTLS stays on offer (senders
        // prefer encryption to none) and the edge's bundle replaces it when it comes.
        // A node that is not installation-wide never gets the shared bundle (403): its own
        // pair is how it is meant to run, so that is said as information, not a warning.
        const scoped = err instanceof EdgeRefusedError && err.status === 403;
        if (scoped) options.log.info('this node serves its own project only, so the edge keeps the installation\'s shared certificate from it: the listener presents a self-signed pair of its own', { names });
        else options.log.warn('listener certificate not available from the edge; presenting a stand-in self-signed pair until it is', { error: String(err) });
        const pair = await generateSelfSigned(names);
        standIn = { context: createSecureContext({ key: pair.private_key, cert: pair.certificate }), notAfter: pair.not_after };
        refreshDefaults();
        if (!scoped && !current) void keepTrying();
      }
      // How an assignment, an unassignment or a renewed pair reaches a running node.
      timer = setInterval(() => void poll(), options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
      timer.unref();
    },
    forListener(listener) {
      const chosen = defaults.get(listener) ?? defaultFor(listener);
      if (!chosen) throw new Error('listener TLS not started');
      defaults.set(listener, chosen);
      return {
        secureContext: chosen.context,
        // Per handshake: Map lookups over contexts built when the bundle came.
        // Without a choice, smtp-server falls back to the default ('*').
        SNICallback: (servername, cb) => {
          const resolved = current ? resolveCertificate(current, listener, servername, acme) : null;
          cb(null, resolved?.certificate.context);
        },
      };
    },
    attach(listener, server) {
      servers.push({ listener, server });
      const chosen = defaults.get(listener) ?? defaultFor(listener);
      if (chosen) {
        defaults.set(listener, chosen);
        server.secureContext.set('*', chosen.context);
      }
    },
    presented,
    report(listener = 'inbound'): TlsReport {
      const { source, not_after } = presented(listener);
      return { source, not_after, generation: current?.bundle.generation ?? null };
    },
    generation: () => current?.bundle.generation ?? null,
    stop() {
      clearInterval(timer);
      stopping.abort();
    },
  };
}
