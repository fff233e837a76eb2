import { suppressions } from '@edgemail/schema';
import type { SuppressionRecord } from '../../contracts/suppression.js';

export const suppressionColumns = {
  id: suppressions.id, projectId: suppressions.projectId, address: suppressions.address,
  reason: suppressions.reason, createdAt: suppressions.createdAt,
};
type Row = Pick<typeof suppressions.$inferSelect, keyof typeof suppressionColumns>;

export function presentSuppression(row: Row): SuppressionRecord {
  return { id: row.id, project_id: row.projectId, address: row.address, reason: row.reason, created_at: row.createdAt.toISOString() };
}
