// A project's SSO policy (`projects.sso_required`, `projects.sso_provider_ids`):
// whether its members must sign in through single sign-on, and through which
// identity providers. Stored here; enforced where sessions are judged
// (services/console/sso-rule.ts; docs/console.md, "SSO policy").
import { and, eq, inArray, sql } from 'drizzle-orm';
import { identityProviders, projects } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { conflict, invalid, notFound } from '../errors.js';

export interface SsoPolicy { required: boolean; provider_ids: string[] }

// The stored list as shown: providers deleted since (the array has no foreign key) drop out, the order stays.
const shownProviderIds = sql<string[]>`array(
  select x.id from unnest(${projects.ssoProviderIds}) with ordinality as x(id, n)
  where exists (select 1 from ${identityProviders} ip where ip.id = x.id) order by x.n)`;

export async function ssoPolicy(db: Db, projectId: string): Promise<SsoPolicy> {
  const [row] = await db.select({ required: projects.ssoRequired, provider_ids: shownProviderIds }).from(projects).where(eq(projects.id, projectId));
  if (!row) throw notFound('project not found');
  return row;
}

export const SELF_LOCKOUT = 'provider_ids must include the identity provider this session signed in through: requiring single sign-on without it would lock this session out of the project at once';

/**
 * @param change `providerIds` omitted: the stored list, or, when this turns the
 *               policy on, the requesting session's provider
 * @param sessionProviderId the requesting session's identity provider (the route refuses sessions without one when requiring)
 */
export async function setSsoPolicy(db: Db, projectId: string, change: { required: boolean; providerIds?: string[] }, sessionProviderId: string | null): Promise<SsoPolicy> {
  const current = await ssoPolicy(db, projectId);
  let providerIds: string[];
  if (change.providerIds) {
    providerIds = [...new Set(change.providerIds.map((id) => id.toLowerCase()))];
    const found = providerIds.length
      ? await db.select({ id: identityProviders.id }).from(identityProviders)
        .where(and(inArray(identityProviders.id, providerIds), eq(identityProviders.enabled, true)))
      : [];
    const known = new Set(found.map((r) => r.id));
    const unknown = providerIds.filter((id) => !known.has(id));
    if (unknown.length) {
      const problem = `unknown or disabled identity provider: ${unknown.join(', ')}`;
      throw invalid(`invalid request body: provider_ids: ${problem}`, { provider_ids: problem });
    }
  } else {
    providerIds = change.required && !current.required && sessionProviderId ? [sessionProviderId] : current.provider_ids;
  }
  if (change.required && (!sessionProviderId || !providerIds.includes(sessionProviderId))) throw conflict(SELF_LOCKOUT);
  const [row] = await db.update(projects).set({ ssoRequired: change.required, ssoProviderIds: providerIds })
    .where(eq(projects.id, projectId)).returning({ required: projects.ssoRequired, provider_ids: projects.ssoProviderIds });
  if (!row) throw notFound('project not found');
  return row;
}
