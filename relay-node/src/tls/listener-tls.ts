// The certificate a listener presents, from the edge: GET it, and when the
// installation has none yet, make the self-signed pair and offer it (PUT), so
// every node converges on the one the edge stored first.
import { createSecureContext, type SecureContext } from 'node:tls';
import { Backoff, sleep } from '../edge/backoff.js';
import type { EdgeClient } from '../edge/client.js';
import { retrying } from '../edge/retry.js';
import { EdgeRefusedError, isFatalEdgeError } from '../edge/errors.js';
import type { CertificateAnswer, TlsReport } from '@edgemail/shared';
import type { Log } from '../log.js';
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

export interface ListenerTlsOptions {
  edge: Pick<EdgeClient, 'certificate' | 'offerSelfSigned'>;
  /** `server.public_url`: its host names the certificate. */
  publicUrl: string;
  /** The listener asking (`inbound`). */
  listener?: string;
  log: Log;
  /** Told when the edge revokes the node or refuses its credential. */
  onFatal?: (err: Error) => void;
  /** How long start-up waits for the edge before presenting a stand-in pair, ms. Default 10000. */
  startupTimeoutMs?: number;
  /** Re-fetch period, ms (an assigned or renewed certificate arrives this way). Default 300000. */
  refreshIntervalMs?: number;
}

export interface ListenerTls {
  /** Gets the certificate (or a stand-in when the edge cannot be reached in time) and starts the refresh timer. */
  start(): Promise<void>;
  /** For `createInboundServer`'s `tls` option. */
  inboundTls(): PresentedTls;
  /** Keeps `server`'s default context (clients without SNI) in step with the current certificate. */
  attach(server: TakesSecureContext): void;
  /** The heartbeat's `tls` object (`source: stand_in` while the edge's pair has not come). */
  report(): TlsReport;
  stop(): void;
}

/**
 * @example
 * const tls = createListenerTls({ edge, publicUrl: config['server.public_url'], log });
 * await tls.start();
 * const server = createInboundServer(deps, { ...options, tls: tls.inboundTls() });
 * tls.attach(server);
 */
export function createListenerTls(options: ListenerTlsOptions): ListenerTls {
  const listener = options.listener ?? 'inbound';
  const names = certificateNames(options.publicUrl);
  const stopping = new AbortController();
  const servers: TakesSecureContext[] = [];
  let current: { context: SecureContext; answer: CertificateAnswer | null; standInNotAfter?: string } | null = null;
  let timer: NodeJS.Timeout | undefined;

  /** The edge's certificate for the listener's main name; makes and offers the pair when there is none. */
  const obtain = async (signal: AbortSignal): Promise<CertificateAnswer> => {
    const found = await options.edge.certificate({ listener, name: names[0]! }, signal);
    if (found) return found;
    options.log.info('no listener certificate yet: generating the self-signed pair and offering it to the edge', { names });
    const pair = await generateSelfSigned(names);
    return options.edge.offerSelfSigned({ certificate: pair.certificate, private_key: pair.private_key }, signal);
  };

  const use = (answer: CertificateAnswer | null, context: SecureContext) => {
    current = { context, answer };
    for (const server of servers) server.secureContext.set('*', context);
  };

  const adopt = (answer: CertificateAnswer): void => {
    if (current?.answer?.certificate === answer.certificate) return;
    // A broken pair from the edge must not replace a working one.
    const context = createSecureContext({ key: answer.private_key, cert: answer.certificate });
    use(answer, context);
    options.log.info('listener certificate in use', { source: answer.source, not_after: answer.not_after });
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
      // adopt() inside: a pair that does not load is one more failure, as before.
      await retrying(async () => adopt(await obtain(stopping.signal)), {
        signal: stopping.signal,
        backoff,
        // Whatever failed (the edge, making or offering the pair), a revoked node aside, may pass later.
        retryable: () => true,
        onRetry: (err) => options.log.warn('listener certificate still not available from the edge', { error: String(err) }),
      });
    } catch (err) {
      fatal(err); // else stop() ended the wait
    }
  };

  const refresh = async () => {
    try {
      adopt(await obtain(stopping.signal));
    } catch (err) {
      if (!fatal(err) && !stopping.signal.aborted) options.log.warn('listener certificate refresh failed; keeping the current one', { error: String(err) });
    }
  };

  return {
    async start() {
      const deadline = AbortSignal.any([stopping.signal, AbortSignal.timeout(options.startupTimeoutMs ?? 10_000)]);
      try {
        adopt(await retrying(() => obtain(deadline), { signal: deadline }));
      } catch (err) {
        if (isFatalEdgeError(err)) throw err;
        // Present a pair of our own meanwhile: STARTTLS stays on offer (senders
        // prefer encryption to none) and the edge's pair replaces it when it comes.
        // A node that is not installation-wide never gets the shared pair (403): its own
        // one is how it is meant to run, so that is said as information, not a warning.
        const scoped = err instanceof EdgeRefusedError && err.status === 403;
        if (scoped) options.log.info('this node serves its own project only, so the edge keeps the installation\'s shared certificate from it: the listener presents a self-signed pair of its own', { names });
        else options.log.warn('listener certificate not available from the edge; presenting a stand-in self-signed pair until it is', { error: String(err) });
        const pair = await generateSelfSigned(names);
        use(null, createSecureContext({ key: pair.private_key, cert: pair.certificate }));
        current!.standInNotAfter = pair.not_after;
        if (!scoped) void keepTrying();
      }
      // Assignment and ACME (steps 1 and 2) arrive with the certificates issue;
      // this period is how a changed certificate will reach a running node.
      timer = setInterval(() => {
        if (current?.answer) void refresh();
      }, options.refreshIntervalMs ?? 5 * 60_000);
      timer.unref();
    },
    inboundTls() {
      if (!current) throw new Error('listener TLS not started');
      return {
        secureContext: current.context,
        // Per handshake: today every name gets the installation's pair; the
        // certificates issue will look up `servername` here (steps 1 and 2).
        SNICallback: (_servername, cb) => cb(null, current!.context),
      };
    },
    attach(server) {
      servers.push(server);
      if (current) server.secureContext.set('*', current.context);
    },
    report(): TlsReport {
      if (current?.answer) return { source: current.answer.source, not_after: current.answer.not_after };
      return { source: 'stand_in', not_after: current?.standInNotAfter ?? null };
    },
    stop() {
      clearInterval(timer);
      stopping.abort();
    },
  };
}
