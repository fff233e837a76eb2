import { and, eq } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { domainColumns, presentDomain, type PresentSettings } from './present.js';

export async function getDomain(db: Db, settings: PresentSettings, projectId: string, id: string) {
  const [row] = await db.select(domainColumns).from(domains)
    .where(and(eq(domains.projectId, projectId), eq(domains.id, id)));
  if (!row) throw notFound('domain not found');
  return presentDomain(row, settings);
}
