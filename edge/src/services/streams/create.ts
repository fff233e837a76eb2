import { messageStreams } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { conflict } from '../errors.js';
import type { CreateStreamInput, StreamRecord } from '../../contracts/stream.js';
import { presentStream } from './present.js';

/** A project stream; its name taken already is 409. */
export async function createStream(db: Db, projectId: string, input: CreateStreamInput): Promise<StreamRecord> {
  const [row] = await db.insert(messageStreams)
    .values({ projectId, name: input.name, kind: input.kind, description: input.description ?? '' })
    .onConflictDoNothing({ target: [messageStreams.projectId, messageStreams.name] })
    .returning();
  if (!row) throw conflict(`stream ${input.name} exists already in this project`);
  return presentStream(row);
}
