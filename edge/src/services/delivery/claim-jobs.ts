// A relay node's claim, start to end (docs/sending.md, "Relay protocol:
// outbound"): lease the due recipients, settle the simulator's, make the jobs
// of the rest, and fail or return those whose job cannot be made this time.
import { handOver, type DeliveryContext } from './context.js';
import { claimDue } from './claim.js';
import { buildJobs, type OutboundJob } from './jobs.js';
import { failClaimed, releaseClaimed } from './unclaim.js';
import { settleSimulated, splitSimulated } from './simulator.js';

/** Up to `max` jobs for the node (none when nothing is due); the events written are handed over after the answer. */
export async function claimJobs(ctx: DeliveryContext, max: number): Promise<OutboundJob[]> {
  const { db, config, node } = ctx;
  const { rows: claimed, pool } = await claimDue(db, config, node, max);
  if (!claimed.length) return [];

  // Simulator addresses are settled here, never handed out (simulator.ts). A failure
  // to settle them returns them to the queue and does not hold up the real jobs of this claim.
  const { domain, simulated, real: rows } = splitSimulated(config, claimed);
  try {
    for (const events of await settleSimulated(db, config, node.id, domain, simulated)) handOver(ctx, events);
  } catch (e) {
    console.error(`outbound: simulator addresses not settled, returned to the queue: ${e instanceof Error ? e.message : String(e)}`);
    await releaseClaimed(db, config, node.id, simulated.map((s) => s.row.id));
  }
  if (!rows.length) return [];

  const { jobs, failures, released } = await buildJobs(config, ctx.env.MAIL_STORE, rows, pool);
  for (const r of released) console.warn(`outbound ${r.id}: returned to the queue, no job this time: ${r.problem}`);
  // `detail` is the operator's account (the shared pool's server and seal error); the tenant's record gets `problem`.
  for (const f of failures) console.warn(`outbound ${f.id}: failed at the claim: ${f.detail ?? f.problem}`);
  const [events] = await Promise.all([failClaimed(db, node.id, failures), releaseClaimed(db, config, node.id, released.map((r) => r.id))]);
  handOver(ctx, events);
  return jobs;
}
