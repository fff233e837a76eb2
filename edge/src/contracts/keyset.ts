// Keyset paging, newest first by `(<timestamp column>, id)`: the cursor a
// page answers with and the query that takes it back. One definition for every
// list that pages this way (inbound email, the email log, webhook deliveries).
import { z } from '@hono/zod-openapi';
import { integerQuery, Uuid } from './common.js';

/** A timestamp that may carry microseconds, so that it can be sent back as `before` exactly. */
export const CursorTimestamp = z.string().openapi({
  format: 'date-time',
  example: '2026-11-26T02:00:00.000Z',
  description: 'Milliseconds, or microseconds when the stored value has them; send it back unchanged as `before`',
});

/** `next` of a page: the last row's timestamp and id. */
export const keysetCursor = (name: string) => z.object({ before: CursorTimestamp, before_id: z.uuid() }).openapi(name);

export const queryParam = (name: string) => ({ param: { name, in: 'query' as const } });

/**
 * The page query: `limit`, `before` + `before_id`, and the list's own filters.
 * @param column the timestamp the list is ordered by, as the docs name it (`received_at`)
 */
export function keysetQuery<F extends z.ZodRawShape>(column: string, limits: { max: number; fallback: number }, filters: F) {
  return z.object({
    ...filters,
    limit: integerQuery('limit', 1, limits.max, limits.fallback),
    before: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).optional()
      .openapi({ ...queryParam('before'), description: `\`${column}\` of the last row seen; send with \`before_id\`` }),
    before_id: Uuid.optional().openapi({ ...queryParam('before_id'), description: 'id of that row; send with `before`' }),
  }).superRefine((query, ctx) => {
    const q = query as { before?: string; before_id?: string };
    // Either alone would skip or repeat rows that share a timestamp across the page boundary.
    if (q.before_id !== undefined && q.before === undefined) ctx.addIssue({ code: 'custom', path: ['before'], message: 'required with before_id' });
    if (q.before !== undefined && q.before_id === undefined) ctx.addIssue({ code: 'custom', path: ['before_id'], message: 'required with before' });
  });
}
