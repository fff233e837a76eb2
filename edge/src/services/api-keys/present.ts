import { apiKeys } from '@edgemail/schema';
import { iso } from '../../contracts/common.js';
import type { ApiKeyRecord } from '../../contracts/api-key.js';

/** The columns a key record is built from: never the hash. */
export const apiKeyColumns = {
  id: apiKeys.id, projectId: apiKeys.projectId, name: apiKeys.name, keyPrefix: apiKeys.keyPrefix,
  permissions: apiKeys.permissions, allowedIps: apiKeys.allowedIps, revoked: apiKeys.revoked,
  sandbox: apiKeys.sandbox, expiresAt: apiKeys.expiresAt, lastUsedAt: apiKeys.lastUsedAt, createdAt: apiKeys.createdAt,
};
type Row = Pick<typeof apiKeys.$inferSelect, keyof typeof apiKeyColumns>;

export function presentApiKey(row: Row): ApiKeyRecord {
  return {
    id: row.id, project_id: row.projectId, name: row.name, key_prefix: row.keyPrefix,
    permissions: row.permissions, allowed_ips: row.allowedIps, revoked: row.revoked, sandbox: row.sandbox,
    expires_at: iso(row.expiresAt), last_used_at: iso(row.lastUsedAt), created_at: row.createdAt.toISOString(),
  };
}
