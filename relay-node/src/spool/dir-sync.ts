// fsync of a directory, shared by concurrent callers ("group commit").
import { open } from 'node:fs/promises';

/**
 * Returns a function that makes every rename and unlink done in `dir` before
 * the call durable. Callers arriving while a sync is in flight share the next
 * one (that one may have started before their rename), so N concurrent
 * messages cost about two directory fsyncs, not N.
 */
export function createDirSync(dir: string): () => Promise<void> {
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;

  const start = (): Promise<void> => {
    const run = syncDir(dir).finally(() => {
      if (running === run) running = null;
    });
    running = run;
    return run;
  };

  return () => {
    if (!running) return start();
    next ??= running
      .catch(() => {})
      .then(() => {
        next = null;
        return start();
      });
    return next;
  };
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
