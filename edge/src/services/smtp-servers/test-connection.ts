import { and, eq } from 'drizzle-orm';
import { smtpServers } from '@edgemail/schema';
import { isIp, type Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import type { SmtpProbeReport, SmtpSecurity } from '../../contracts/smtp-server.js';
import { openSmtpPassword } from './password.js';
import { probeSmtpServer } from '../../net/smtp-probe.js';
import { checkSmtpHost } from '../../net/smtp-host-check.js';
import { inScope, SMTP_SERVER_NOT_FOUND, type SmtpServerScope } from './scope.js';

type ProbeSettings = Pick<Config, 'database.crypto.encryption_key' | 'server.public_url' | 'dns.doh_url' | 'smtp_servers.allow_private_targets'>;

/**
 * Connects to a server of the scope from the Worker and reports each SMTP
 * step (smtp-probe.ts). A server that fails is a report with `ok: false`,
 * not an error; only an unknown id (or another scope's) is.
 */
export async function testSmtpServer(db: Db, settings: ProbeSettings, scope: SmtpServerScope, id: string, timeoutMs: number): Promise<SmtpProbeReport> {
  const [row] = await db.select({
    host: smtpServers.host, port: smtpServers.port, security: smtpServers.security,
    username: smtpServers.username, passwordSealed: smtpServers.passwordSealed,
  }).from(smtpServers).where(and(inScope(scope), eq(smtpServers.id, id)));
  if (!row) throw notFound(SMTP_SERVER_NOT_FOUND);
  let address: string | null = null;
  if (scope.kind === 'project') {
    // Checked again: DNS may have changed since the server was added.
    const verdict = await checkSmtpHost(row.host, row.port, settings);
    if (!verdict.ok) return { ok: false, steps: [{ step: 'connect', ok: false, error: `host refused: ${verdict.problem}`, duration_ms: 0 }] };
    // Connect to an address the check saw, never to the name: the runtime would resolve it again,
    // and a second answer could point inside (DNS rebinding). IPv4 first, as resolved.
    address = verdict.addresses?.[0] ?? null;
  }
  const password = row.passwordSealed === null ? null : await openSmtpPassword(row.passwordSealed, settings['database.crypto.encryption_key']);
  return probeSmtpServer(
    { host: row.host, address, port: row.port, security: row.security as SmtpSecurity, username: row.username, password },
    { timeoutMs, ehloName: ehloName(settings['server.public_url']) },
  );
}

/** The service's public host as EHLO names it: a domain, or an address literal (RFC 5321 4.1.3). */
export function ehloName(publicUrl: string): string {
  const host = new URL(publicUrl).hostname;
  if (host.startsWith('[')) return `[IPv6:${host.slice(1, -1)}]`;
  return isIp(host) ? `[${host}]` : host;
}
