// The node record (shared/src/relay-protocol/nodes.ts), named and described
// for the OpenAPI document: enrolment, heartbeat and `GET /api/v1/relay/nodes`.
import { z } from '@hono/zod-openapi';
import { NodeRecord } from '@edgemail/shared';
import { asTimestamp } from './common.js';

const field = NodeRecord.shape;

/** The node record of docs/relay-protocol.md: never the credential's hash. */
export const RelayNodeSchema = NodeRecord.extend({
  name: field.name.meta({ example: 'mx1' }),
  key_prefix: field.key_prefix.meta({ example: 'myr_a1b2c3d4' }),
  version: field.version.meta({ example: '0.1.0' }),
  listeners: field.listeners.meta({ description: 'As reported by the last heartbeat' }),
  tls: field.tls.meta({ description: 'As reported by the last heartbeat' }),
  dead_letters: field.dead_letters.meta({ description: 'Messages in the node\'s `dead/` folder (refused by the edge for good; `edgemail relay dead-letters` lists them), as of the last heartbeat' }),
  dead_letter_bytes: field.dead_letter_bytes.meta({ description: 'Bytes in the node\'s `dead/` folder, as of the last heartbeat; past `relay_node.spool.max_dead_letter_bytes` the node takes no new mail' }),
  last_heartbeat_at: asTimestamp(field.last_heartbeat_at),
  created_at: asTimestamp(field.created_at),
}).openapi('RelayNode');

export type RelayNodeRecord = z.infer<typeof RelayNodeSchema>;
