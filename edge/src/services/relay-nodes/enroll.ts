import { relayNodes } from '@edgemail/schema';
import { generateToken, sha256Hex } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import type { EnrollInput } from '../../schemas/relay.js';
import { presentRelayNode, relayNodeColumns } from './present.js';

/** A new node in the project of the enrolling key; its `myr_` token is returned here only. */
export async function enrollRelayNode(db: Db, projectId: string, input: EnrollInput) {
  const { token, keyPrefix } = generateToken('relay');
  const [row] = await db
    .insert(relayNodes)
    .values({ projectId, name: input.name, version: input.version ?? null, keyPrefix, keyHash: await sha256Hex(token) })
    .returning(relayNodeColumns);
  return { node: presentRelayNode(row!), token };
}
