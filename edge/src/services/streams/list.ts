import { asc, eq } from 'drizzle-orm';
import { messageStreams } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { StreamRecord } from '../../contracts/stream.js';
import { BUILT_IN_STREAMS } from '../../contracts/send.js';
import { presentStream } from './present.js';

const BUILT_IN_DESCRIPTIONS: Record<(typeof BUILT_IN_STREAMS)[number], string> = {
  transactional: 'Mail a recipient asked for (receipts, resets, notices): the default stream',
  broadcast: 'Mail sent to many (newsletters, announcements): one-click unsubscribe, DMARC required',
};

/** The built-in streams first, then the project's by name. */
export async function listStreams(db: Db, projectId: string): Promise<StreamRecord[]> {
  const rows = await db.select().from(messageStreams).where(eq(messageStreams.projectId, projectId)).orderBy(asc(messageStreams.name));
  return [
    ...BUILT_IN_STREAMS.map((name): StreamRecord => ({ id: null, name, kind: name, description: BUILT_IN_DESCRIPTIONS[name], built_in: true, created_at: null })),
    ...rows.map(presentStream),
  ];
}
