// ACME on a relay node (docs/acme.md): the http-01 responder, the node's
// account, the orders and the manager deciding when to order, wired from the
// `acme.*` settings. Started by node.ts when `acme.enabled` is on.
import type { Config } from '@edgemail/shared';
import type { EdgeClient } from '../../edge/client.js';
import type { Log } from '../../log.js';
import { loadAccountKey } from './account-key.js';
import { createAcmeManager, type AcmeManager } from './acme-manager.js';
import { createChallengeLookup } from './challenge-lookup.js';
import { trustDirectoryCa } from './directory-trust.js';
import { createHttp01Responder } from './http01-responder.js';
import { createAcmeOrder } from './order.js';

export { createAcmeManager, describeFailure, type AcmeCheckOutcome, type AcmeManager } from './acme-manager.js';
export { createChallengeLookup, HTTP01_TOKEN } from './challenge-lookup.js';
export { createHttp01Responder, type Http01Responder } from './http01-responder.js';
export { accountKeyFile } from './account-key.js';

/** Test overrides; production takes the settings. */
export interface AcmeOptions {
  /** The responder's port instead of `acme.http_port` (0 picks a free one). */
  httpPort?: number;
  /** Between checks, ms (an hour). */
  intervalMs?: number;
  /** First wait while polling the CA, ms (5000). */
  pollMinMs?: number;
}

export interface RunningAcme {
  readonly httpPort: number;
  readonly manager: AcmeManager;
  stop(): Promise<void>;
}

export async function startAcme(deps: {
  config: Config; edge: EdgeClient; stateDir: string; host: string; log: Log; onFatal: (err: Error) => void; options?: AcmeOptions;
}): Promise<RunningAcme> {
  const { config, edge, log } = deps;
  const directoryUrl = config['acme.directory_url'];
  if (config['acme.directory_ca_file']) await trustDirectoryCa(directoryUrl, config['acme.directory_ca_file']);
  const accountKey = await loadAccountKey(deps.stateDir);
  const responder = createHttp01Responder({
    port: deps.options?.httpPort ?? config['acme.http_port'],
    host: deps.host,
    lookup: createChallengeLookup({ fetch: (token) => edge.acmeChallenge(token), log, perClientPerMinute: config['acme.edge_lookups_per_client_per_minute'] }),
    log,
  });
  const httpPort = await responder.start();
  const order = createAcmeOrder({
    directoryUrl,
    accountKey,
    email: config['acme.email'],
    pollMinMs: deps.options?.pollMinMs,
    challenges: {
      async publish(host, token, keyAuthorization) {
        responder.publish(token, keyAuthorization);
        await edge.publishAcmeChallenge({ token, key_authorization: keyAuthorization, host });
      },
      async remove(token) {
        responder.remove(token);
        await edge.removeAcmeChallenge(token);
      },
    },
  });
  const manager = createAcmeManager({ hosts: config['acme.hosts'], edge, order, log, onFatal: deps.onFatal, intervalMs: deps.options?.intervalMs });
  manager.start();
  log.info('acme started', { hosts: config['acme.hosts'], directory: directoryUrl, http01: `${deps.host}:${httpPort}` });
  return {
    httpPort,
    manager,
    async stop() {
      await manager.stop();
      await responder.stop();
    },
  };
}
