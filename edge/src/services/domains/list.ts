import { desc, eq } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { domainColumns, presentDomain, type PresentSettings } from './present.js';

/** The project's domains, newest first. */
export async function listDomains(db: Db, settings: PresentSettings, projectId: string) {
  const rows = await db.select(domainColumns).from(domains)
    .where(eq(domains.projectId, projectId))
    .orderBy(desc(domains.createdAt), desc(domains.id));
  return rows.map((row) => presentDomain(row, settings));
}
