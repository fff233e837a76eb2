// Whose SMTP servers a call manages: one project's own, or the platform's
// shared pool (rows with project_id null). Every query of this folder filters
// by it in SQL, so a project route can never reach a pool row or another
// project's, and the admin pool routes never reach a project's.
import { eq, isNull, type SQL } from 'drizzle-orm';
import { smtpServers } from '@edgemail/schema';

export type SmtpServerScope = { kind: 'project'; projectId: string } | { kind: 'pool' };

export const projectScope = (projectId: string): SmtpServerScope => ({ kind: 'project', projectId });
export const POOL_SCOPE: SmtpServerScope = { kind: 'pool' };

/** The SQL condition selecting the scope's rows. */
export const inScope = (scope: SmtpServerScope): SQL =>
  scope.kind === 'pool' ? isNull(smtpServers.projectId) : eq(smtpServers.projectId, scope.projectId);

/** The project_id a new row of the scope gets. */
export const ownerOf = (scope: SmtpServerScope): string | null => (scope.kind === 'pool' ? null : scope.projectId);

export const SMTP_SERVER_NOT_FOUND = 'smtp server not found';
