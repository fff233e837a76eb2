// Who orders a host's ACME certificate (docs/acme.md). Relay nodes run the
// orders, since the host names point at them; the edge only decides: one
// node at a time per host (a lease in acme_leases), and only when the stored
// `acme:<host>` certificate is missing or within RENEWAL_WINDOW_DAYS of its
// end. A failed order holds the host back for FAILURE_HOLD_MINUTES, so that
// nodes do not take turns spending the CA's failed-validation allowance.
import { sql } from 'drizzle-orm';
import { acmeCertificateName, type AcmeLeaseAnswer, type Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { conflict, forbidden } from '../errors.js';
import { RENEWAL_WINDOW_DAYS } from './self-signed.js';

/** Long enough for an order (Let's Encrypt takes seconds); a node that dies mid-order frees the host by then. */
export const LEASE_MINUTES = 10;
/** After a failure no node orders for the host again before this. */
export const FAILURE_HOLD_MINUTES = 60;

/** ACME serves every project's mail hosts: only installation-wide nodes take part (as for the shared certificate). */
export function assertAcmeNode(node: { installationWide: boolean }): void {
  if (!node.installationWide) throw forbidden('ACME is run by installation-wide relay nodes only');
}

/** The edge's own settings decide which hosts may be ordered at all: a node's settings alone do not. */
export function assertAcmeHost(config: Config, host: string): void {
  if (!config['acme.enabled']) throw forbidden('ACME is not enabled on the edge (acme.enabled)');
  if (!config['acme.hosts'].includes(host)) throw conflict(`${host} is not in the edge's acme.hosts`);
}

const iso = (value: string | Date | null) => (value === null ? null : new Date(value).toISOString());

/**
 * Grants the lease when the host is due and no lease is live, in one
 * statement: the upsert only replaces an expired row, so two nodes asking at
 * once cannot both be granted.
 */
export async function requestLease(db: Db, config: Config, nodeId: string, host: string): Promise<AcmeLeaseAnswer> {
  assertAcmeHost(config, host);
  const { rows: [row] } = await db.execute<{ due: boolean; not_after: string | null; granted_until: string | null; held_until: string | null }>(sql`
    with cert as (
      select not_after from certificates where name = ${acmeCertificateName(host)}
    ), due as (
      select not exists (select 1 from cert where not_after > now() + make_interval(days => ${RENEWAL_WINDOW_DAYS})) as due
    ), granted as (
      insert into acme_leases (host, node_id, expires_at)
      select ${host}::text, ${nodeId}::uuid, now() + make_interval(mins => ${LEASE_MINUTES}) from due where due.due
      on conflict (host) do update set node_id = excluded.node_id, expires_at = excluded.expires_at
        where acme_leases.expires_at <= now()
      returning expires_at
    )
    select (select due from due) as due, (select not_after from cert) as not_after,
           (select expires_at from granted) as granted_until,
           (select expires_at from acme_leases where host = ${host}) as held_until`);
  const notAfter = iso(row!.not_after);
  if (row!.granted_until) return { host, granted: true, expires_at: iso(row!.granted_until), reason: null, not_after: notAfter };
  if (!row!.due) return { host, granted: false, expires_at: null, reason: 'not_due', not_after: notAfter };
  return { host, granted: false, expires_at: iso(row!.held_until), reason: 'held', not_after: notAfter };
}

/**
 * Records a failed order (shown to operators as acme_leases.last_error) and
 * keeps the host held until FAILURE_HOLD_MINUTES from now. Only the node
 * holding the lease reports for it.
 */
export async function reportFailure(db: Db, config: Config, nodeId: string, host: string, error: string): Promise<{ host: string; retry_after: string }> {
  assertAcmeHost(config, host);
  const { rows: [row] } = await db.execute<{ expires_at: string }>(sql`
    update acme_leases set last_error = ${error}, expires_at = now() + make_interval(mins => ${FAILURE_HOLD_MINUTES})
    where host = ${host} and node_id = ${nodeId}
    returning expires_at`);
  if (!row) throw conflict(`this node holds no ACME lease for ${host}`);
  return { host, retry_after: iso(row.expires_at)! };
}
