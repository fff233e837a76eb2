// The durable spool: "the 250 is the promise". A message is on disk, fsynced,
// before write() resolves, and stays until the edge has acknowledged it.
import { createReadStream } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { createDirSync } from './dir-sync.js';
import { SpoolEntryNotFoundError } from './spool-errors.js';
import { createSpoolId, isSpoolId } from './spool-id.js';
import { writeFileDurably, type SpoolBody } from './write-durably.js';

/** One spooled message as read back. */
export interface SpoolEntry<M> {
  id: string;
  meta: M;
  /** Body size in bytes. */
  size: number;
  /** Opens the body for streaming (one copy on disk, none in memory). */
  openBody(): Readable;
}

export interface Spool<M> {
  readonly dir: string;
  /**
   * Stores one message and resolves only once body and metadata are fsynced
   * and renamed into place with the directory fsynced: answer 250 after this.
   * `meta` (the envelope, client IP, HELO, verdicts...) must survive
   * JSON.stringify; it may be a promise (verdicts computed while the body
   * streams in), awaited once the body is on disk. On any error nothing is
   * left behind and the error is rethrown as it came.
   */
  write(body: SpoolBody, meta: M | PromiseLike<M>): Promise<{ id: string; size: number }>;
  /** Ids of pending messages, oldest first. */
  list(): Promise<string[]>;
  /** A pending message; throws SpoolEntryNotFoundError if there is none. */
  read(id: string): Promise<SpoolEntry<M>>;
  /** Forgets a message once the edge has acknowledged it; no-op if absent. */
  remove(id: string): Promise<void>;
  /** How many messages are pending. */
  depth(): Promise<number>;
}

const BODY = '.eml';
const META = '.json';
const TEMP = '.tmp';

/**
 * Opens (creating, mode 0700) a spool directory and clears what a crash left:
 * temp files and halves of messages whose write never resolved. One process
 * per directory: two nodes sharing one would forward everything twice.
 *
 * Layout: `<id>.eml` (the bytes) and `<id>.json` (the metadata), each written
 * as `<name>.tmp`, fsynced, then renamed. A message exists when both files do;
 * the directory fsync after both renames is what write() waits for.
 *
 * @example
 * const spool = await openSpool<Envelope>('/var/spool/edgemail');
 * const { id } = await spool.write(normalizedStream, { mailFrom, rcptTo, clientIp });
 * // now answer 250, then forward and remove(id) once the edge acknowledged
 */
export async function openSpool<M = Record<string, unknown>>(dir: string): Promise<Spool<M>> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // The directory may predate us with looser rights; mail is private.
  await chmod(dir, 0o700);
  const syncDir = createDirSync(dir);
  const path = (id: string, ext: string) => join(dir, id + ext);

  if (await clearLeftovers(dir)) await syncDir();

  const list = async (): Promise<string[]> => completeIds(await readdir(dir));

  return {
    dir,
    async write(body, meta) {
      // A caller's promise must not turn into an unhandled rejection when the
      // body fails first and we never get to await it.
      Promise.resolve(meta).catch(() => {});
      const id = createSpoolId();
      const temps = [path(id, BODY + TEMP), path(id, META + TEMP)] as const;
      try {
        const size = await writeFileDurably(temps[0], body);
        const json = JSON.stringify(await meta);
        if (json === undefined) throw new TypeError('spool metadata must be a JSON value');
        await writeFileDurably(temps[1], Buffer.from(json, 'utf8'));
        await rename(temps[0], path(id, BODY));
        await rename(temps[1], path(id, META));
        await syncDir();
        return { id, size };
      } catch (err) {
        await Promise.all([...temps, path(id, META), path(id, BODY)].map((p) => rm(p, { force: true })));
        throw err;
      }
    },
    list,
    async read(id) {
      if (!isSpoolId(id)) throw new SpoolEntryNotFoundError(id);
      try {
        const meta = JSON.parse(await readFile(path(id, META), 'utf8')) as M;
        const { size } = await stat(path(id, BODY));
        return { id, meta, size, openBody: () => createReadStream(path(id, BODY)) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SpoolEntryNotFoundError(id);
        throw err;
      }
    },
    async remove(id) {
      if (!isSpoolId(id)) return;
      // Metadata first: without it the body is an orphan that open() clears.
      await rm(path(id, META), { force: true });
      await rm(path(id, BODY), { force: true });
      // A removal lost to a crash means one more forward of an acknowledged
      // message (the edge dedupes by id); the fsync makes that rare.
      await syncDir();
    },
    async depth() {
      return (await list()).length;
    },
  };
}

/** Ids with both halves present, oldest first (ids sort by time). */
function completeIds(names: string[]): string[] {
  const present = new Set(names);
  return names
    .filter((name) => name.endsWith(META) && isSpoolId(name.slice(0, -META.length)))
    .map((name) => name.slice(0, -META.length))
    .filter((id) => present.has(id + BODY))
    .sort();
}

/** Removes temp files and half-messages; true when anything was removed. */
async function clearLeftovers(dir: string): Promise<boolean> {
  const names = await readdir(dir);
  const complete = new Set(completeIds(names));
  const leftovers = names.filter((name) => {
    if (name.endsWith(TEMP)) return isSpoolId(name.split('.')[0] ?? '');
    const ext = name.endsWith(BODY) ? BODY : name.endsWith(META) ? META : null;
    if (!ext) return false; // not ours: leave it alone
    const id = name.slice(0, -ext.length);
    return isSpoolId(id) && !complete.has(id);
  });
  await Promise.all(leftovers.map((name) => rm(join(dir, name), { force: true })));
  return leftovers.length > 0;
}
