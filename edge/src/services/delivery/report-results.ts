// A relay node's report of its attempts (docs/sending.md, "Relay protocol:
// outbound"): recorded in one statement (results.ts), its events handed over
// after the answer.
import type { OutboundResultInput } from '../../contracts/relay-outbound.js';
import { handOver, type DeliveryContext } from './context.js';
import { recordResults } from './results.js';

/** Which results counted (`accepted`) and which did not (`stale`), in the order reported. */
export async function reportResults(ctx: DeliveryContext, results: OutboundResultInput[]): Promise<{ accepted: string[]; stale: string[] }> {
  const { accepted, stale, events } = await recordResults(ctx.db, ctx.config, ctx.node.id, results);
  handOver(ctx, events);
  return { accepted, stale };
}
