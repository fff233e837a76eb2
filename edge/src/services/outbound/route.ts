// Where a job goes (docs/sending.md, "The path of one message"): the
// project's own SMTP server if it has one, else a server of the shared pool
// (one at random, so that the pool shares the load), else the recipient's MX.
import type { Config } from '@edgemail/shared';
import { SealError } from '../../crypto/seal.js';
import { openSmtpPassword } from '../smtp-servers/password.js';
import type { SmtpServerRow } from './claim.js';

export type JobRoute =
  | { kind: 'mx'; domain: string }
  | {
    kind: 'smtp';
    source: 'project' | 'pool';
    host: string;
    port: number;
    security: 'starttls' | 'tls' | 'none';
    username: string | null;
    password: string | null;
  };

const SECURITIES = new Set(['starttls', 'tls', 'none']);

/**
 * The route of one recipient. Throws SealError naming the server when its
 * password cannot be opened (the caller fails the recipient with it).
 *
 * @param pick chooses one of the pool (tests pass their own)
 */
export async function chooseRoute(
  settings: Pick<Config, 'database.crypto.encryption_key'>,
  recipient: string,
  projectServer: SmtpServerRow | null,
  pool: SmtpServerRow[],
  pick: (n: number) => number = (n) => Math.floor(Math.random() * n),
): Promise<JobRoute> {
  const server = projectServer ?? (pool.length ? pool[pick(pool.length)]! : null);
  if (!server) return { kind: 'mx', domain: recipient.slice(recipient.lastIndexOf('@') + 1).toLowerCase() };
  let password: string | null = null;
  if (server.password_sealed) {
    try {
      password = await openSmtpPassword(server.password_sealed, settings['database.crypto.encryption_key']);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      throw new SealError(`the password of SMTP server ${server.name} (${server.host}:${server.port}) cannot be opened: ${why}`);
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
