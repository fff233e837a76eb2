// A relay node renews the leases of the jobs it still holds (docs/sending.md,
// "Relay protocol: outbound"): a delivery that runs long, or a job that waits
// for a slot on a loaded node, stays this node's while the node is alive, so
// no other node claims and delivers it again. A node that dies stops renewing
// and its leases run out as before.
import { sql } from 'drizzle-orm';
import { emails } from '@edgemail/schema';
import type { OutboundLeaseRef } from '@edgemail/shared';
import type { DeliveryContext } from './context.js';

export interface RenewedLeases {
  /** Extended to `now() + outbound.lease`, in the order named. */
  renewed: { email_id: string; lease_until: string; lease_ms: number }[];
  /** Not this node's at that attempt (claimed again, or already reported): nothing changed. */
  lost: string[];
}

/**
 * One statement: every named recipient still `sending`, leased to this node
 * at the attempt named, gets its lease moved to `now() + outbound.lease`. A
 * lease that has run out but was not claimed again is renewed too (no other
 * node holds it); one claimed again has another attempt number and is lost.
 * The row lock orders a renewal and a concurrent claim: the claim skips a row
 * being renewed, and a renewal after a claim sees the new attempt.
 */
export async function renewLeases(ctx: Pick<DeliveryContext, 'db' | 'config' | 'node'>, leases: OutboundLeaseRef[]): Promise<RenewedLeases> {
  const leaseMs = ctx.config['outbound.lease'];
  const { rows } = await ctx.db.execute<{ email_id: string; lease_until: string }>(sql`
    update ${emails} e
    set next_attempt_at = now() + ${leaseMs} * interval '1 millisecond'
    from jsonb_to_recordset(${JSON.stringify(leases)}::jsonb) as l(email_id uuid, attempt int)
    where e.id = l.email_id and e.status = 'sending' and e.lease_node_id = ${ctx.node.id} and e.attempts = l.attempt
    returning e.id as email_id, to_char(e.next_attempt_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as lease_until`);
  const byId = new Map(rows.map((r) => [r.email_id, r.lease_until]));
  const renewed: RenewedLeases['renewed'] = [];
  const lost: string[] = [];
  for (const { email_id } of leases) {
    const until = byId.get(email_id);
    if (until === undefined) lost.push(email_id);
    else renewed.push({ email_id, lease_until: until, lease_ms: leaseMs });
  }
  return { renewed, lost };
}
