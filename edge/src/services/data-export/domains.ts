import { and, eq } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import { domainColumns, presentDomain } from '../domains/present.js';
import { cursorText, newestFirst, olderThan, pageOf, PAGE_ROWS, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/** Domain records as `GET /api/v1/domains/{id}` returns them: the DKIM public key in its DNS record, never the private key. */
export const domainSource = exportSource<Cursor>({
  type: 'domain',
  async read({ db, projectId, settings }, cursor) {
    const rows = await db.select({ ...domainColumns, cursorAt: cursorText(domains.createdAt) }).from(domains)
      .where(and(eq(domains.projectId, projectId), olderThan(cursor, domains.createdAt, domains.id)))
      .orderBy(...newestFirst(domains.createdAt, domains.id, 'asc'))
      .limit(PAGE_ROWS);
    return pageOf(rows, (row) => presentDomain(row, settings));
  },
});
