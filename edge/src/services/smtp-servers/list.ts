import { asc } from 'drizzle-orm';
import { smtpServers } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { presentSmtpServer, smtpServerColumns } from './present.js';
import { inScope, type SmtpServerScope } from './scope.js';

/** The scope's servers, oldest first (the order relay nodes try them in). */
export async function listSmtpServers(db: Db, scope: SmtpServerScope) {
  const rows = await db.select(smtpServerColumns).from(smtpServers)
    .where(inScope(scope))
    .orderBy(asc(smtpServers.createdAt), asc(smtpServers.id));
  return rows.map(presentSmtpServer);
}
