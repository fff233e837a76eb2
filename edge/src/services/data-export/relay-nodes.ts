import { and, eq } from 'drizzle-orm';
import { relayNodes } from '@edgemail/schema';
import { presentRelayNode, relayNodeColumns } from '../relay-nodes/present.js';
import { cursorText, newestFirst, olderThan, pageOf, PAGE_ROWS, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/** The relay nodes the project enrolled, as `GET /api/v1/relay/nodes` lists them: the credential's prefix, never its hash. */
export const relayNodeSource = exportSource<Cursor>({
  type: 'relay_node',
  async read({ db, projectId }, cursor) {
    const rows = await db.select({ ...relayNodeColumns, cursorAt: cursorText(relayNodes.createdAt) }).from(relayNodes)
      .where(and(eq(relayNodes.projectId, projectId), olderThan(cursor, relayNodes.createdAt, relayNodes.id)))
      .orderBy(...newestFirst(relayNodes.createdAt, relayNodes.id, 'asc'))
      .limit(PAGE_ROWS);
    return pageOf(rows, presentRelayNode);
  },
});
