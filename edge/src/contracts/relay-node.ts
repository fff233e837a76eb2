import { z } from '@hono/zod-openapi';
import { Timestamp } from './common.js';

/** The node record of docs/relay-protocol.md: never the credential's hash. */
export const RelayNodeSchema = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  name: z.string().openapi({ example: 'mx1' }),
  key_prefix: z.string().openapi({ example: 'myr_a1b2c3d4' }),
  revoked: z.boolean(),
  version: z.string().nullable().openapi({ example: '0.1.0' }),
  listeners: z.array(z.unknown()).openapi({ description: 'As reported by the last heartbeat' }),
  tls: z.record(z.string(), z.unknown()).openapi({ description: 'As reported by the last heartbeat' }),
  spool_depth: z.number().int(),
  dead_letters: z.number().int().openapi({ description: 'Messages in the node\'s `dead/` folder (refused by the edge for good; `edgemail relay dead-letters` lists them), as of the last heartbeat' }),
  dead_letter_bytes: z.number().int().openapi({ description: 'Bytes in the node\'s `dead/` folder, as of the last heartbeat; past `relay_node.spool.max_dead_letter_bytes` the node takes no new mail' }),
  last_heartbeat_at: Timestamp.nullable(),
  last_address: z.string().nullable(),
  created_at: Timestamp,
}).openapi('RelayNode');

export type RelayNodeRecord = z.infer<typeof RelayNodeSchema>;
