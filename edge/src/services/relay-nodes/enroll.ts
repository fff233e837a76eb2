import { sql } from 'drizzle-orm';
import { relayNodes } from '@edgemail/schema';
import { generateToken, sha256Hex } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { projectLock } from '../../db/project-lock.js';
import { invalid } from '../errors.js';
import type { EnrollInput } from '../../contracts/relay.js';
import { presentRelayNode, relayNodeColumns } from './present.js';

/**
 * A new node in the project of the enrolling key; its `myr_` token is returned here only.
 * At most `maxPerProject` unrevoked nodes per project (`relay_nodes.max_per_project`, 0: no cap):
 * one more is refused with 400 and nothing is written. The count and the insert run in one
 * transaction behind a per-project advisory lock, so two enrolments can never both take the last place.
 */
export async function enrollRelayNode(db: Db, projectId: string, input: EnrollInput, maxPerProject: number) {
  const { token, keyPrefix } = generateToken('relay');
  const values = { projectId, name: input.name, version: input.version ?? null, keyPrefix, keyHash: await sha256Hex(token) };
  if (maxPerProject <= 0) {
    const [row] = await db.insert(relayNodes).values(values).returning(relayNodeColumns);
    return { node: presentRelayNode(row!), token };
  }
  const [, inserted] = await db.batch([
    db.execute(projectLock('relay_nodes', projectId)),
    // Read after the lock (READ COMMITTED: a new snapshot per statement), so it sees the previous holder's node.
    db.execute<{ id: string }>(sql`
      insert into ${relayNodes} (project_id, name, version, key_prefix, key_hash)
      select ${projectId}, ${values.name}, ${values.version}, ${keyPrefix}, ${values.keyHash}
      where (select count(*) from ${relayNodes} where project_id = ${projectId} and not revoked) < ${maxPerProject}
      returning id`),
  ]);
  const id = inserted.rows[0]?.id;
  if (!id) {
    throw invalid(`relay node limit reached: this project already has ${maxPerProject} enrolled relay nodes (relay_nodes.max_per_project); revoke one first`);
  }
  const [row] = await db.select(relayNodeColumns).from(relayNodes).where(sql`${relayNodes.id} = ${id}`);
  return { node: presentRelayNode(row!), token };
}
