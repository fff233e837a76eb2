// One message, two readers (the spool and the verifier), one pass over the
// bytes and no second copy in memory.
import { PassThrough, type Readable } from 'node:stream';

/**
 * Copies `source` into `count` new streams at the pace of the slowest reader
 * (each holds at most its highWaterMark). A branch destroyed by its reader is
 * skipped from then on; an error of `source` destroys every branch with it.
 *
 * @example const [toSpool, toVerifier] = fanOut(message, 2);
 */
export function fanOut(source: Readable, count: number): PassThrough[] {
  const branches = Array.from({ length: count }, () => {
    const branch = new PassThrough();
    // A reader that only pipes never listens for 'error'; an unheard error
    // event would take the whole node down. Readers that listen still hear it.
    branch.on('error', () => undefined);
    return branch;
  });
  source.on('data', (chunk: Buffer) => {
    const slow = branches.filter((b) => !b.destroyed && !b.write(chunk));
    if (!slow.length) return;
    source.pause();
    let waiting = slow.length;
    for (const branch of slow) {
      const ready = () => {
        branch.off('drain', ready);
        branch.off('close', ready);
        if (--waiting === 0) source.resume();
      };
      branch.on('drain', ready);
      branch.on('close', ready);
    }
  });
  source.on('end', () => branches.forEach((b) => b.destroyed || b.end()));
  source.on('error', (err) => branches.forEach((b) => b.destroy(err)));
  source.on('close', () => {
    if (!source.readableEnded) branches.forEach((b) => b.destroyed || b.destroy(new Error('the message stream closed before its end')));
  });
  return branches;
}
