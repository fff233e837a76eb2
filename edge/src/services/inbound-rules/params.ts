// What an action takes besides its conditions, checked once the request and
// the stored rule are merged: a parameter of another action is refused, a
// missing one named, and webhook ids must be the project's own.
import { and, eq, inArray } from 'drizzle-orm';
import { domains, webhooks } from '@edgemail/schema';
import type { RuleAction } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { invalid } from '../errors.js';
import { DEFAULT_REFUSE_TEXT } from '../../contracts/inbound-rule.js';

export interface ActionParams { refuseText: string | null; webhookIds: string[] | null; forwardTo: string | null }

const NEEDS: Record<RuleAction, keyof ActionParams | null> = { store: null, drop: null, refuse: 'refuseText', webhooks: 'webhookIds', forward: 'forwardTo' };
const FIELD: Record<keyof ActionParams, string> = { refuseText: 'refuse_text', webhookIds: 'webhook_ids', forwardTo: 'forward_to' };
const ACTION_OF: Record<keyof ActionParams, RuleAction> = { refuseText: 'refuse', webhookIds: 'webhooks', forwardTo: 'forward' };

/**
 * The parameters to store for `action`. `given`: those the request set
 * (null clears); `stored`: the rule's current ones, kept only when they fit.
 */
export async function checkActionParams(db: Db, projectId: string, action: RuleAction, given: Partial<ActionParams>, stored: ActionParams | null): Promise<ActionParams> {
  const needed = NEEDS[action];
  for (const [key, value] of Object.entries(given) as [keyof ActionParams, unknown][]) {
    if (value !== null && value !== undefined && key !== needed) {
      const field = FIELD[key];
      throw invalid(`invalid request body: ${field}: only with action ${ACTION_OF[key]}`, { [field]: `only with action ${ACTION_OF[key]}` });
    }
  }
  const out: ActionParams = { refuseText: null, webhookIds: null, forwardTo: null };
  if (!needed) return out;
  const value = given[needed] !== undefined ? given[needed] : stored?.[needed] ?? null;
  if (needed === 'refuseText') {
    out.refuseText = (value as string | null) ?? DEFAULT_REFUSE_TEXT;
    return out;
  }
  if (value === null) {
    const field = FIELD[needed];
    throw invalid(`invalid request body: ${field}: required with action ${action}`, { [field]: `required with action ${action}` });
  }
  if (needed === 'webhookIds') {
    const ids = [...new Set(value as string[])];
    const found = await db.select({ id: webhooks.id }).from(webhooks).where(and(eq(webhooks.projectId, projectId), inArray(webhooks.id, ids)));
    const known = new Set(found.map((r) => r.id));
    const unknown = ids.find((id) => !known.has(id));
    if (unknown) throw invalid(`invalid request body: webhook_ids: unknown webhook ${unknown}`, { webhook_ids: `unknown webhook ${unknown}` });
    out.webhookIds = ids;
  } else {
    // A forward to this project's own domain would come straight back in (a loop the hop limit
    // would only stop after three copies): a rule of the project decides that mail instead.
    const address = (value as string).toLowerCase();
    const domain = address.slice(address.lastIndexOf('@') + 1);
    const own = await db.select({ id: domains.id }).from(domains).where(and(eq(domains.projectId, projectId), eq(domains.name, domain))).limit(1);
    if (own.length) throw invalid(`invalid request body: forward_to: is at ${domain}, a domain of this project: the mail would come straight back (use a rule on that recipient instead)`, { forward_to: `is at ${domain}, a domain of this project` });
    out.forwardTo = address;
  }
  return out;
}
