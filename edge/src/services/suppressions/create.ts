import { sql } from 'drizzle-orm';
import { suppressions } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { conflict } from '../errors.js';
import type { CreateSuppressionInput } from '../../contracts/suppression.js';
import { presentSuppression, suppressionColumns } from './present.js';
import { streamKind } from '../streams/resolve.js';

/**
 * Adds an address the project does not send to and whose mail it refuses;
 * `input.address` is already bare and lower case. An entry of the address
 * past its `expires_at` no longer applies, so it is replaced (same id, fresh
 * `created_at`); one that still applies is 409.
 */
export async function createSuppression(db: Db, projectId: string, input: CreateSuppressionInput) {
  const values = {
    projectId, address: input.address, reason: input.reason, detail: input.detail ?? null,
    sourceEmailId: null, expiresAt: input.expires_at ? new Date(input.expires_at) : null, stream: input.stream ?? '',
  };
  if (input.stream) await streamKind(db, projectId, input.stream, 'stream');
  const [row] = await db.insert(suppressions).values(values)
    .onConflictDoUpdate({
      target: [suppressions.projectId, suppressions.address, suppressions.stream],
      set: { reason: values.reason, detail: values.detail, sourceEmailId: null, expiresAt: values.expiresAt, createdAt: sql`now()` },
      setWhere: sql`${suppressions.expiresAt} <= now()`,
    })
    .returning(suppressionColumns);
  if (!row) throw conflict(`address ${input.address} is already suppressed${input.stream ? ` for stream ${input.stream}` : ''}`);
  return presentSuppression(row);
}
