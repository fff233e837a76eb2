// Which kind of stream a send names: the built-in `transactional` and
// `broadcast`, or a stream the project defined (`message_streams`).
import { and, eq, inArray } from 'drizzle-orm';
import { messageStreams } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { invalid } from '../errors.js';
import { BUILT_IN_STREAMS, type StreamKind } from '../../contracts/send.js';

const isBuiltIn = (name: string): name is StreamKind => (BUILT_IN_STREAMS as readonly string[]).includes(name);

/** The kind of each name; a name that is neither built in nor the project's is absent. */
export async function streamKinds(db: Db, projectId: string, names: Iterable<string>): Promise<Map<string, StreamKind>> {
  const out = new Map<string, StreamKind>();
  const custom: string[] = [];
  for (const name of new Set(names)) {
    if (isBuiltIn(name)) out.set(name, name);
    else custom.push(name);
  }
  if (custom.length) {
    const rows = await db.select({ name: messageStreams.name, kind: messageStreams.kind }).from(messageStreams)
      .where(and(eq(messageStreams.projectId, projectId), inArray(messageStreams.name, custom)));
    for (const r of rows) out.set(r.name, r.kind as StreamKind);
  }
  return out;
}

export const unknownStreamProblem = (name: string) =>
  `stream ${name} is not a stream of this project: use transactional or broadcast, or create it with POST /api/v1/streams`;

/** The kind of one stream, or 400 naming `field`. */
export async function streamKind(db: Db, projectId: string, name: string, field: string): Promise<StreamKind> {
  const kind = (await streamKinds(db, projectId, [name])).get(name);
  if (!kind) throw invalid(`invalid request body: ${field}: ${unknownStreamProblem(name)}`, { [field]: unknownStreamProblem(name) });
  return kind;
}
