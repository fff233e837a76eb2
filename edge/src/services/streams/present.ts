import type { messageStreams } from '@edgemail/schema';
import type { StreamRecord } from '../../contracts/stream.js';
import type { StreamKind } from '../../contracts/send.js';

export function presentStream(row: typeof messageStreams.$inferSelect): StreamRecord {
  return { id: row.id, name: row.name, kind: row.kind as StreamKind, description: row.description, built_in: false, created_at: row.createdAt.toISOString() };
}
