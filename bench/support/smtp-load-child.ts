// Entry of the SMTP load client's child process: runs one load at a time as
// the parent asks over IPC, and answers with its result.
import { smtpLoad, type SmtpLoadOptions } from './smtp-load.js';

process.on('message', ({ id, options }: { id: number; options: SmtpLoadOptions }) => {
  smtpLoad(options).then(
    (result) => process.send!({ id, result }),
    (e: unknown) => process.send!({ id, error: e instanceof Error ? e.stack ?? e.message : String(e) }),
  );
});
process.on('disconnect', () => process.exit(0));
