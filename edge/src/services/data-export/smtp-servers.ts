import { and, eq } from 'drizzle-orm';
import { smtpServers } from '@edgemail/schema';
import { presentSmtpServer, smtpServerColumns } from '../smtp-servers/present.js';
import { cursorText, newestFirst, olderThan, pageOf, PAGE_ROWS, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/** The project's own SMTP servers (not the platform's shared pool) as `GET /api/v1/smtp-servers` lists them: `has_password`, never the password. */
export const smtpServerSource = exportSource<Cursor>({
  type: 'smtp_server',
  async read({ db, projectId }, cursor) {
    const rows = await db.select({ ...smtpServerColumns, cursorAt: cursorText(smtpServers.createdAt) }).from(smtpServers)
      .where(and(eq(smtpServers.projectId, projectId), olderThan(cursor, smtpServers.createdAt, smtpServers.id)))
      .orderBy(...newestFirst(smtpServers.createdAt, smtpServers.id, 'asc'))
      .limit(PAGE_ROWS);
    return pageOf(rows, presentSmtpServer);
  },
});
