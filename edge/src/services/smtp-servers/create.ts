import { smtpServers } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { invalid, unavailable } from '../errors.js';
import { checkSmtpHost } from '../../net/smtp-host-check.js';
import type { CreateSmtpServerInput } from '../../contracts/smtp-server.js';
import { sealSmtpPassword } from './password.js';
import { presentSmtpServer, smtpServerColumns } from './present.js';
import { ownerOf, type SmtpServerScope } from './scope.js';

type CreateSettings = Pick<Config, 'database.crypto.encryption_key' | 'dns.doh_url' | 'smtp_servers.allow_private_targets'>;

/**
 * Stores a server in the scope (a project's, or the shared pool); the password
 * sealed, never returned. A project's host must be public (host-check.ts).
 */
export async function createSmtpServer(db: Db, settings: CreateSettings, scope: SmtpServerScope, input: CreateSmtpServerInput) {
  const encryptionKey = settings['database.crypto.encryption_key'];
  if (scope.kind === 'project') {
    const verdict = await checkSmtpHost(input.host, input.port, settings);
    if (!verdict.ok && verdict.transient) throw unavailable(`could not check host: ${verdict.problem}`);
    if (!verdict.ok) throw invalid(`invalid request body: host: ${verdict.problem}`, { host: verdict.problem });
  }
  const [row] = await db.insert(smtpServers).values({
    projectId: ownerOf(scope),
    name: input.name,
    host: input.host,
    port: input.port,
    security: input.security,
    username: input.username ?? null,
    passwordSealed: input.password === undefined ? null : await sealSmtpPassword(input.password, encryptionKey),
  }).returning(smtpServerColumns);
  return presentSmtpServer(row!);
}
