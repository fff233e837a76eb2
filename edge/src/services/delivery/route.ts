// Where a job goes (docs/sending.md, "The path of one message"): the
// project's own SMTP server if it has one, else a server of the shared pool
// (one at random, so that the pool shares the load), else the recipient's MX.
import { addressDomain, type Config, type OutboundRoute } from '@edgemail/shared';
import { SealError } from '../../crypto/seal.js';
import { openSmtpPassword } from '../smtp-servers/password.js';
import type { SmtpServerRow } from './claim.js';

const SECURITIES = new Set(['starttls', 'tls', 'none']);

/**
 * A server password that cannot be opened. `message` is what the tenant's
 * email log and webhooks show; `detail` is for the edge's log only. A
 * project's own server is named in both (it is the tenant's); the shared
 * pool is the operator's, so its name, host and the seal error stay in the log.
 */
export class RoutePasswordError extends SealError {
  constructor(message: string, readonly detail: string) {
    super(message);
  }
}

/** What a tenant is told when the shared pool's password cannot be opened. */
export const POOL_UNUSABLE = 'the shared SMTP pool cannot be used: one of its servers is misconfigured (the operator has the details)';

/**
 * The route of one recipient. Throws RoutePasswordError when the chosen
 * server's password cannot be opened (the caller fails the recipient with it).
 *
 * @param pick chooses one of the pool (tests pass their own)
 */
export async function chooseRoute(
  settings: Pick<Config, 'database.crypto.encryption_key'>,
  recipient: string,
  projectServer: SmtpServerRow | null,
  pool: SmtpServerRow[],
  pick: (n: number) => number = (n) => Math.floor(Math.random() * n),
): Promise<OutboundRoute> {
  const server = projectServer ?? (pool.length ? pool[pick(pool.length)]! : null);
  // A recipient's domain is stored normalized (lower case, no trailing dot) already.
  if (!server) return { kind: 'mx', domain: addressDomain(recipient) };
  let password: string | null = null;
  if (server.password_sealed) {
    try {
      password = await openSmtpPassword(server.password_sealed, settings['database.crypto.encryption_key']);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      const detail = `the password of ${projectServer ? '' : 'shared pool '}SMTP server ${server.name} (${server.host}:${server.port}) cannot be opened: ${why}`;
      throw new RoutePasswordError(projectServer ? detail : POOL_UNUSABLE, detail);
    }
  }
  return {
    kind: 'smtp',
    source: projectServer ? 'project' : 'pool',
    host: server.host,
    port: server.port,
    // The column is checked when written; an unknown value is treated as the safest one.
    security: SECURITIES.has(server.security) ? server.security as 'starttls' | 'tls' | 'none' : 'starttls',
    username: server.username,
    password,
  };
}
