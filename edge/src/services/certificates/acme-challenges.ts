// http-01 answers (docs/acme.md). The node that orders publishes each one
// here before it tells the CA to validate, so that whichever node the CA's
// request reaches (behind a balancer, or DNS naming several) can answer it.
// Rows live as long as a lease and are removed by the node after validation;
// expired ones are swept by the next publication.
import { sql } from 'drizzle-orm';
import type { AcmeChallengeAnswer, AcmeChallengeRequest } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { conflict } from '../errors.js';
import { LEASE_MINUTES } from './acme-leases.js';

type ChallengeRow = { token: string; key_authorization: string; host: string; expires_at: string };

const present = (row: ChallengeRow): AcmeChallengeAnswer => ({
  token: row.token, key_authorization: row.key_authorization, host: row.host, expires_at: new Date(row.expires_at).toISOString(),
});

/** Publishes (or replaces) a challenge; only the node holding the host's live lease may. */
export async function publishChallenge(db: Db, nodeId: string, challenge: AcmeChallengeRequest): Promise<AcmeChallengeAnswer> {
  const { rows: [row] } = await db.execute<ChallengeRow>(sql`
    with swept as (
      delete from acme_challenges where expires_at < now()
    )
    insert into acme_challenges (token, key_authorization, host, expires_at)
    select ${challenge.token}::text, ${challenge.key_authorization}::text, ${challenge.host}::text, now() + make_interval(mins => ${LEASE_MINUTES})
    where exists (select 1 from acme_leases where host = ${challenge.host} and node_id = ${nodeId} and expires_at > now())
    on conflict (token) do update set key_authorization = excluded.key_authorization, host = excluded.host, expires_at = excluded.expires_at
    returning token, key_authorization, host, expires_at`);
  if (!row) throw conflict(`this node holds no live ACME lease for ${challenge.host}`);
  return present(row);
}

/** A live challenge by its token; null when unknown or expired. */
export async function findChallenge(db: Db, token: string): Promise<AcmeChallengeAnswer | null> {
  const { rows: [row] } = await db.execute<ChallengeRow>(sql`
    select token, key_authorization, host, expires_at from acme_challenges where token = ${token} and expires_at > now()`);
  return row ? present(row) : null;
}

/** Removes a challenge of a host whose lease this node holds (or held last). */
export async function removeChallenge(db: Db, nodeId: string, token: string): Promise<boolean> {
  const { rows } = await db.execute<{ token: string }>(sql`
    delete from acme_challenges c using acme_leases l
    where c.token = ${token} and l.host = c.host and l.node_id = ${nodeId}
    returning c.token`);
  return rows.length > 0;
}
