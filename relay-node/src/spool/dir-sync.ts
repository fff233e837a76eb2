// fsync of the spool directory, shared by concurrent callers ("group commit").
import { close, fsync as fsyncFd, open } from 'node:fs';
import { promisify } from 'node:util';

/**
 * How the spool makes one file or the directory durable. `fsync` is the real
 * fsync(2) of that file or directory; the default just calls it. A test
 * passes its own to count, watch or delay the calls (or to fail them).
 */
export type SpoolFsync = (target: { path: string; kind: 'file' | 'directory' }, fsync: () => Promise<void>) => Promise<void>;

export const plainFsync: SpoolFsync = (_target, fsync) => fsync();

const openFd = promisify(open);
const fsyncFdAsync = promisify(fsyncFd);
const closeFd = promisify(close);

/** The directory's fsync, with the directory held open so each one is a single system call. */
export interface DirSync {
  /**
   * Resolves once every rename and unlink made in the directory before the
   * call is durable.
   */
  sync(): Promise<void>;
  /** Closes the directory; sync() fails from then on. */
  close(): Promise<void>;
}

/**
 * Opens `dir` for the spool's directory fsyncs. The rule: a sync() resolves
 * only after a directory fsync that started after the call was made, so after
 * the caller's rename. With no fsync in flight, one starts at once. While one
 * is in flight, callers cannot use it (it may have started before their
 * rename): they all share the next one, which starts when the current one
 * ends. So N concurrent writers cost about two directory fsyncs, not N, and
 * nobody waits longer than two. A failed fsync rejects the callers it was
 * started for; the next caller gets a fresh one.
 */
export async function openDirSync(dir: string, fsync: SpoolFsync = plainFsync): Promise<DirSync> {
  // A plain descriptor, not a FileHandle: the spool lives as long as its
  // process, and a FileHandle left to the garbage collector warns.
  let fd: number | null = await openFd(dir, 'r');
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;

  const once = async (): Promise<void> => {
    // Checked when the fsync starts: after close() the number may name another file.
    if (fd === null) throw new Error(`spool directory ${dir} is closed`);
    const current = fd;
    await fsync({ path: dir, kind: 'directory' }, () => fsyncFdAsync(current));
  };

  const start = (): Promise<void> => {
    const run = once().finally(() => {
      if (running === run) running = null;
    });
    running = run;
    return run;
  };

  return {
    sync() {
      if (!running) return start();
      next ??= running
        .catch(() => {})
        .then(() => {
          next = null;
          return start();
        });
      return next;
    },
    async close() {
      const current = fd;
      fd = null;
      await Promise.allSettled([running, next]);
      if (current !== null) await closeFd(current);
    },
  };
}
