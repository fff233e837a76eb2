// A project's thresholds on rspamd's score for its inbound mail
// (`projects.inbound_spam_reject_score`, `inbound_spam_mark_score`; docs/inbound.md,
// Spam scoring). The reject threshold reaches relay nodes with the domain list
// (`spam_reject`), whose version changes with it; the mark threshold is read at ingest.
import { eq } from 'drizzle-orm';
import { projects } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { invalid, notFound } from '../errors.js';

export interface InboundSpamSettings { reject_score: number | null; mark_score: number | null }

const columns = { reject_score: projects.inboundSpamRejectScore, mark_score: projects.inboundSpamMarkScore };

export async function inboundSpamSettings(db: Db, projectId: string): Promise<InboundSpamSettings> {
  const [row] = await db.select(columns).from(projects).where(eq(projects.id, projectId));
  if (!row) throw notFound('project not found');
  return row;
}

/**
 * Sets both thresholds (null turns one off). A mark threshold above the
 * reject threshold could never apply (the message is refused first): refused.
 */
export async function setInboundSpamSettings(db: Db, projectId: string, change: InboundSpamSettings): Promise<InboundSpamSettings> {
  if (change.reject_score !== null && change.mark_score !== null && change.mark_score > change.reject_score) {
    const problem = `must not be above reject_score (${change.reject_score}): mail at that score is refused before it could be marked`;
    throw invalid(`invalid request body: mark_score: ${problem}`, { mark_score: problem });
  }
  const [row] = await db.update(projects)
    .set({ inboundSpamRejectScore: change.reject_score, inboundSpamMarkScore: change.mark_score })
    .where(eq(projects.id, projectId)).returning(columns);
  if (!row) throw notFound('project not found');
  return row;
}
