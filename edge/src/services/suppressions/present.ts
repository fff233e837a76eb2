import { suppressions } from '@edgemail/schema';
import type { SuppressionRecord } from '../../contracts/suppression.js';

export const suppressionColumns = {
  id: suppressions.id, projectId: suppressions.projectId, address: suppressions.address,
  reason: suppressions.reason, detail: suppressions.detail, sourceEmailId: suppressions.sourceEmailId,
  expiresAt: suppressions.expiresAt, createdAt: suppressions.createdAt, stream: suppressions.stream,
};
type Row = Pick<typeof suppressions.$inferSelect, keyof typeof suppressionColumns>;

export function presentSuppression(row: Row): SuppressionRecord {
  return {
    id: row.id, project_id: row.projectId, address: row.address, reason: row.reason, detail: row.detail,
    source_email_id: row.sourceEmailId, expires_at: row.expiresAt ? row.expiresAt.toISOString() : null,
    created_at: row.createdAt.toISOString(),
    // '' in the row: every stream.
    stream: row.stream === '' ? null : row.stream,
  };
}
