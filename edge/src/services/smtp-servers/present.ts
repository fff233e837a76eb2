import { sql } from 'drizzle-orm';
import { smtpServers } from '@edgemail/schema';
import type { SmtpSecurity, SmtpServerRecord } from '../../contracts/smtp-server.js';

/** Everything of a server but its sealed password, which no record carries (only whether there is one). */
export const smtpServerColumns = {
  id: smtpServers.id, projectId: smtpServers.projectId, name: smtpServers.name, host: smtpServers.host,
  port: smtpServers.port, security: smtpServers.security, username: smtpServers.username,
  createdAt: smtpServers.createdAt,
  hasPassword: sql<boolean>`(${smtpServers.passwordSealed} is not null)`.mapWith(Boolean),
};
type Row = Pick<typeof smtpServers.$inferSelect, Exclude<keyof typeof smtpServerColumns, 'hasPassword'>> & { hasPassword: boolean };

export function presentSmtpServer(row: Row): SmtpServerRecord {
  return {
    id: row.id, project_id: row.projectId, name: row.name, host: row.host, port: row.port,
    security: row.security as SmtpSecurity, username: row.username, has_password: row.hasPassword,
    created_at: row.createdAt.toISOString(),
  };
}
