import { and, eq, sql } from 'drizzle-orm';
import { relayNodes } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { unauthorized } from '../errors.js';
import type { HeartbeatInput } from '../../contracts/relay.js';
import { domainsVersionQuery } from './domains.js';
import type { RelayNodeRow } from './find.js';
import { presentRelayNode, relayNodeColumns } from './present.js';

/**
 * Records what the node reports, and answers with the domain list's version,
 * in one round trip. A node revoked since its credential was checked is
 * refused here too.
 */
export async function recordHeartbeat(db: Db, node: RelayNodeRow, input: HeartbeatInput, address: string) {
  const [updated, version] = await db.batch([
    db.update(relayNodes)
      .set({
        version: input.version, listeners: input.listeners, tls: input.tls, spoolDepth: input.spool_depth,
        deadLetters: input.dead_letters, deadLetterBytes: input.dead_letter_bytes,
        lastHeartbeatAt: sql`now()`, lastAddress: address,
      })
      .where(and(eq(relayNodes.id, node.id), eq(relayNodes.revoked, false)))
      .returning(relayNodeColumns),
    domainsVersionQuery(db, node),
  ]);
  const [row] = updated;
  if (!row) throw unauthorized('relay node revoked');
  return { node: presentRelayNode(row), domains_version: version[0]!.version };
}
