import { domains } from '@edgemail/schema';
import type { DomainRecord } from '../../schemas/domain.js';

export const domainColumns = { id: domains.id, projectId: domains.projectId, name: domains.name, createdAt: domains.createdAt };
type Row = Pick<typeof domains.$inferSelect, keyof typeof domainColumns>;

export function presentDomain(row: Row): DomainRecord {
  return { id: row.id, project_id: row.projectId, name: row.name, created_at: row.createdAt.toISOString() };
}
