import { platformCredentials } from '@edgemail/schema';
import { iso } from '../../contracts/common.js';

export const credentialColumns = {
  id: platformCredentials.id, name: platformCredentials.name, keyPrefix: platformCredentials.keyPrefix,
  allowedIps: platformCredentials.allowedIps, revoked: platformCredentials.revoked,
  expiresAt: platformCredentials.expiresAt, lastUsedAt: platformCredentials.lastUsedAt, createdAt: platformCredentials.createdAt,
};
type Row = Pick<typeof platformCredentials.$inferSelect, keyof typeof credentialColumns>;

export const presentCredential = (row: Row) => ({
  id: row.id, name: row.name, key_prefix: row.keyPrefix, allowed_ips: row.allowedIps, revoked: row.revoked,
  expires_at: iso(row.expiresAt), last_used_at: iso(row.lastUsedAt), created_at: row.createdAt.toISOString(),
});
