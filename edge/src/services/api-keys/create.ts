import { apiKeys } from '@edgemail/schema';
import { generateToken, sha256Hex } from '@edgemail/shared';
import type { AnyDb } from '../../db/any-db.js';
import type { CreateApiKeyInput } from '../../contracts/api-key.js';
import { apiKeyColumns, presentApiKey } from './present.js';

export async function createApiKey(db: AnyDb, projectId: string, input: CreateApiKeyInput, createdBy: string | null) {
  const { token, keyPrefix } = generateToken('project');
  const [row] = await db
    .insert(apiKeys)
    .values({
      projectId, name: input.name, keyPrefix, keyHash: await sha256Hex(token),
      permissions: input.permissions, allowedIps: input.allowed_ips,
      expiresAt: input.expires_at ? new Date(input.expires_at) : null, sandbox: input.sandbox, createdBy,
    })
    .returning(apiKeyColumns);
  return { api_key: presentApiKey(row!), token };
}
