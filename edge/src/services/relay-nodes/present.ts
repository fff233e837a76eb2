import { relayNodes } from '@edgemail/schema';
import { iso } from '../../contracts/common.js';
import type { RelayNodeRecord } from '../../contracts/relay-node.js';

/** The columns a node record is built from: never the hash. */
export const relayNodeColumns = {
  id: relayNodes.id, projectId: relayNodes.projectId, name: relayNodes.name, keyPrefix: relayNodes.keyPrefix,
  revoked: relayNodes.revoked, version: relayNodes.version, listeners: relayNodes.listeners, tls: relayNodes.tls,
  spoolDepth: relayNodes.spoolDepth, deadLetters: relayNodes.deadLetters, deadLetterBytes: relayNodes.deadLetterBytes, lastHeartbeatAt: relayNodes.lastHeartbeatAt, lastAddress: relayNodes.lastAddress,
  createdAt: relayNodes.createdAt,
};
type Row = Pick<typeof relayNodes.$inferSelect, keyof typeof relayNodeColumns>;

/** The node record of docs/relay-protocol.md (enrolment, heartbeat and `GET /api/v1/relay/nodes`). */
export function presentRelayNode(row: Row): RelayNodeRecord {
  return {
    id: row.id, project_id: row.projectId, name: row.name, key_prefix: row.keyPrefix, revoked: row.revoked,
    version: row.version, listeners: row.listeners, tls: row.tls, spool_depth: row.spoolDepth,
    dead_letters: row.deadLetters, dead_letter_bytes: row.deadLetterBytes,
    last_heartbeat_at: iso(row.lastHeartbeatAt), last_address: row.lastAddress, created_at: row.createdAt.toISOString(),
  };
}
