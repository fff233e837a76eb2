import { and, eq } from 'drizzle-orm';
import { apiKeys } from '@edgemail/schema';
import { apiKeyColumns, presentApiKey } from '../api-keys/present.js';
import { cursorText, newestFirst, olderThan, pageOf, PAGE_ROWS, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/** Key records as `GET /api/v1/api-keys` lists them: prefixes, never a token or its hash. */
export const apiKeySource = exportSource<Cursor>({
  type: 'api_key',
  async read({ db, projectId }, cursor) {
    const rows = await db.select({ ...apiKeyColumns, cursorAt: cursorText(apiKeys.createdAt) }).from(apiKeys)
      .where(and(eq(apiKeys.projectId, projectId), olderThan(cursor, apiKeys.createdAt, apiKeys.id)))
      .orderBy(...newestFirst(apiKeys.createdAt, apiKeys.id, 'asc'))
      .limit(PAGE_ROWS);
    return pageOf(rows, presentApiKey);
  },
});
