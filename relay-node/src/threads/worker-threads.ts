// What the node's two worker-thread pools (DKIM verification on the inbound
// side, composing and signing on the outbound side) start and pick their
// threads by. The pools keep their own protocols and failure handling.
import { Worker } from 'node:worker_threads';

/**
 * A worker thread for `url`. From TypeScript sources (`node --import tsx`,
 * vitest) a worker does not inherit the loader in a form that runs a `.ts`
 * entry, so it imports the entry through tsx's API instead.
 */
export function startThread(url: URL): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url);
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then(({ tsImport }) => tsImport(${JSON.stringify(url.href)}, ${JSON.stringify(import.meta.url)}))`;
  return new Worker(code, { eval: true });
}

/** The extension a worker entry next to `moduleUrl` has: `.ts` from sources, `.js` from the build. */
export function entryExtension(moduleUrl: string): '.ts' | '.js' {
  return moduleUrl.endsWith('.ts') ? '.ts' : '.js';
}

/**
 * An idle worker, else a new one (`start`) while there are fewer than `size`,
 * else the least busy.
 */
export function pickWorker<W extends { jobs: Map<unknown, unknown> }>(workers: readonly W[], size: number, start: () => W): W {
  const idle = workers.find((w) => w.jobs.size === 0);
  if (idle) return idle;
  if (workers.length < size) return start();
  return workers.reduce((a, b) => (b.jobs.size < a.jobs.size ? b : a));
}
