// At start-up: what the submission spool holds. A message answered 250 from a
// lease (its metadata says `accepted`) is the node's promise: it is read again
// and handed over (the edge knows it by its id if an earlier hand-over got
// through before the crash). One that waited for the edge's verdict was never
// answered 250: it is dropped, and its client sends it again.
import type { Log } from '../log.js';
import type { Spool } from '../spool/index.js';
import type { Handover } from './handover.js';
import { readSubmissionAndId } from './read-submission.js';
import type { SubmissionSpoolMeta } from './types.js';

export async function restoreAccepted(spool: Spool<SubmissionSpoolMeta>, handover: Handover, log: Log): Promise<void> {
  let restored = 0;
  for (const id of await spool.list()) {
    const entry = await spool.read(id);
    const { meta } = entry;
    if (!meta.accepted) {
      await spool.remove(id);
      continue;
    }
    try {
      const read = await readSubmissionAndId(entry.openBody(), meta.rcpt_to);
      handover.enqueue({
        // Not counted against a lease of this run: the edge counted or will count it as it commits.
        units: 0,
        item: {
          id: meta.accepted.id, spool_id: id, project_id: meta.project_id, sandbox: meta.accepted.sandbox,
          client_address: meta.client_address, mail_from: meta.mail_from, rcpt_to: meta.rcpt_to, size: entry.size,
          message: read.message, ...(read.messageId ? { message_id: read.messageId } : {}), ...(read.date ? { date: read.date } : {}),
        },
      });
      restored++;
    } catch (err) {
      // It was read once before its 250; kept for the operator rather than dropped.
      log.error('accepted submission in the spool cannot be read again; left in place', { id, error: (err as Error).message });
    }
  }
  if (restored) log.info('submission spool: handing over messages accepted before the restart', { messages: restored });
}
