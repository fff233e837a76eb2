import { and, eq } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound, unavailable } from '../errors.js';
import { checkDomain, type CheckSettings } from './check.js';
import { domainColumns, presentDomain } from './present.js';

/**
 * Checks the domain's records through `dns.doh_url` now and answers the
 * domain with each record's verdict. 503 when the resolver cannot answer (and
 * nothing changes): that is no verdict on the records.
 */
export async function verifyDomain(db: Db, settings: CheckSettings, projectId: string, id: string) {
  const [row] = await db.select(domainColumns).from(domains)
    .where(and(eq(domains.projectId, projectId), eq(domains.id, id)));
  if (!row) throw notFound('domain not found');
  const outcome = await checkDomain(db, settings, row);
  if (!outcome.ok) throw unavailable(`could not check the domain's DNS records: ${outcome.problem}`);
  if (!outcome.row) throw notFound('domain not found');
  return presentDomain(outcome.row, settings);
}
