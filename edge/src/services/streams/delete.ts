import { and, eq } from 'drizzle-orm';
import { messageStreams } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { invalid, notFound } from '../errors.js';
import { BUILT_IN_STREAMS } from '../../contracts/send.js';

/**
 * Removes a project stream: sends naming it are refused from then on. Mail
 * sent on it keeps its stream in the log, and its suppressions stay (they
 * apply again if a stream of that name is created again).
 */
export async function deleteStream(db: Db, projectId: string, name: string): Promise<void> {
  if ((BUILT_IN_STREAMS as readonly string[]).includes(name)) throw invalid(`stream ${name} is built in and cannot be deleted`, { name: 'is built in' });
  const deleted = await db.delete(messageStreams)
    .where(and(eq(messageStreams.projectId, projectId), eq(messageStreams.name, name)))
    .returning({ id: messageStreams.id });
  if (!deleted.length) throw notFound(`no stream ${name} in this project`);
}
