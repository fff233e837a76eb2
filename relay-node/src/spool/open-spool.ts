// The durable spool: "the 250 is the promise". A message is on disk, fsynced,
// before write() resolves, and stays until the edge has acknowledged it.
import { createReadStream } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { openDirSync, type SpoolFsync } from './dir-sync.js';
import { bodyThenMeta, ONE, readOneFile } from './one-file.js';
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
   * streams in): the body is read to its end regardless, and the metadata is
   * written and fsynced as soon as the promise settles, beside the body's
   * fsync rather than after it. On any error nothing is left behind and the
   * error is rethrown as it came (the body's first, then the metadata's).
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
  /** Lets go of the directory (held open for its fsyncs); write() and remove() fail from then on. */
  close(): Promise<void>;
}

export interface SpoolOptions {
  /** The fsync of every file and directory the spool makes durable; a seam for tests to count or delay them. */
  fsync?: SpoolFsync;
  /**
   * How write() lays a message out. `pair` (the default): `<id>.eml` and
   * `<id>.json`, which the inbound forwarder and its dead letters read and
   * move by path. `single`: one `<id>.msg` (one-file.ts), half the file
   * operations, for a spool only this module reads (the submission spool).
   * Whichever is chosen, list(), read() and remove() take both, so a spool
   * written before a change of layout is still handed over.
   */
  layout?: 'pair' | 'single';
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
 * as `<name>.tmp` and fsynced (the two side by side), then both renamed. A
 * message exists when both files do; the directory fsync after both renames
 * is what write() waits for. That fsync is shared: writes whose renames are
 * done wait together for one directory fsync started after their renames
 * (`openDirSync`), so concurrent messages do not pay one each. The directory
 * stays open for those fsyncs until close(). With `layout: 'single'` a
 * message is one `<id>.msg` (body, metadata, trailer: one-file.ts) written as
 * `<id>.msg.tmp`, fsynced once and renamed: half the file operations.
 *
 * @example
 * const spool = await openSpool<Envelope>('/var/spool/edgemail');
 * const { id } = await spool.write(normalizedStream, { mailFrom, rcptTo, clientIp });
 * // now answer 250, then forward and remove(id) once the edge acknowledged
 */
export async function openSpool<M = Record<string, unknown>>(dir: string, options: SpoolOptions = {}): Promise<Spool<M>> {
  const fsync = options.fsync;
  const single = options.layout === 'single';
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // The directory may predate us with looser rights; mail is private.
  await chmod(dir, 0o700);
  const dirSync = await openDirSync(dir, fsync);
  const syncDir = () => dirSync.sync();
  const path = (id: string, ext: string) => join(dir, id + ext);

  if (await clearLeftovers(dir)) await syncDir();

  const list = async (): Promise<string[]> => completeIds(await readdir(dir));

  return {
    dir,
    async write(body, meta) {
      // A caller's promise must not turn into an unhandled rejection when the
      // body fails first and we never get to use it.
      const metaReady = Promise.resolve(meta);
      metaReady.catch(() => {});
      const id = createSpoolId();
      if (single) return writeOne(id, body, metaReady);
      const temps = [path(id, BODY + TEMP), path(id, META + TEMP)] as const;
      // Body and metadata side by side, both files created at once: the body
      // streams in and is fsynced while the metadata waits for the verdicts
      // (they settle once the body has been read), then is written and
      // fsynced without waiting for the body's fsync. A body that fails ends
      // the wait for the metadata (its error is the one reported).
      const bodyFailed = new AbortController();
      const bodyWritten = writeFileDurably(temps[0], body, { fsync });
      bodyWritten.catch((err: unknown) => bodyFailed.abort(err));
      const metaWritten = writeFileDurably(temps[1], metaReady.then(metaBytes), { fsync, signal: bodyFailed.signal });
      const [written, metaDone] = await Promise.allSettled([bodyWritten, metaWritten]);
      const closing = [written, metaDone].flatMap((r) => (r.status === 'fulfilled' ? [r.value.closed] : []));
      try {
        if (written.status === 'rejected') throw written.reason;
        if (metaDone.status === 'rejected') throw metaDone.reason;
        // Renamed while their descriptors close. A crash between the two
        // renames leaves half a message, which open() clears. Everything
        // settles before any clean-up, so nothing late can outlive it.
        const renamed = await Promise.allSettled([rename(temps[0], path(id, BODY)), rename(temps[1], path(id, META)), ...closing]);
        for (const r of renamed) if (r.status === 'rejected') throw r.reason;
        await syncDir();
        return { id, size: written.value.size };
      } catch (err) {
        await Promise.allSettled(closing);
        await Promise.all([...temps, path(id, META), path(id, BODY)].map((p) => rm(p, { force: true })));
        throw err;
      }
    },
    list,
    async read(id) {
      if (!isSpoolId(id)) throw new SpoolEntryNotFoundError(id);
      if (single) {
        try {
          return { id, ...(await readOneFile(path(id, ONE)) as { meta: M; size: number; openBody(): Readable }) };
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
      try {
        const meta = JSON.parse(await readFile(path(id, META), 'utf8')) as M;
        const { size } = await stat(path(id, BODY));
        return { id, meta, size, openBody: () => createReadStream(path(id, BODY)) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      // A pair-layout spool may hold one-file messages written before a change of layout.
      if (single) throw new SpoolEntryNotFoundError(id);
      try {
        return { id, ...(await readOneFile(path(id, ONE)) as { meta: M; size: number; openBody(): Readable }) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SpoolEntryNotFoundError(id);
        throw err;
      }
    },
    async remove(id) {
      if (!isSpoolId(id)) return;
      // One file, or (none there) the pair a spool written before a change of layout holds.
      if (single && await unlinkIfPresent(path(id, ONE))) return syncDir();
      // Both at once: from the first unlink on the message is no longer
      // listed, and a crash in between leaves a half that open() clears.
      // unlink, not rm: rm looks at each path (lstat) before removing it.
      const removed = await Promise.all([unlinkIfPresent(path(id, META)), unlinkIfPresent(path(id, BODY))]);
      if (!single && !removed.some(Boolean)) await unlinkIfPresent(path(id, ONE));
      // A removal lost to a crash means one more forward of an acknowledged
      // message (the edge dedupes by id); the fsync makes that rare.
      await syncDir();
    },
    async depth() {
      return (await list()).length;
    },
    close: () => dirSync.close(),
  };

  /**
   * The one-file write: the body streamed into `<id>.msg.tmp` as it comes, the
   * metadata appended once it settles, one fsync, one rename, then the shared
   * directory fsync. On any error nothing is left behind.
   */
  async function writeOne(id: string, body: SpoolBody, meta: Promise<M>): Promise<{ id: string; size: number }> {
    const temp = path(id, ONE + TEMP);
    let size = 0;
    // Awaited once the body is written; until then (or when the body fails) its rejection is not unhandled.
    const json = meta.then(metaBytes);
    json.catch(() => {});
    const written = await writeFileDurably(temp, bodyThenMeta(body, json, (n) => { size = n; }), { fsync });
    try {
      // Renamed while its descriptor closes; everything settles before any clean-up.
      const renamed = await Promise.allSettled([rename(temp, path(id, ONE)), written.closed]);
      for (const r of renamed) if (r.status === 'rejected') throw r.reason;
      await syncDir();
      return { id, size };
    } catch (err) {
      await Promise.all([temp, path(id, ONE)].map((p) => rm(p, { force: true })));
      throw err;
    }
  }
}

/** Removes a file; one already gone is no error (false). */
async function unlinkIfPresent(file: string): Promise<boolean> {
  try {
    await unlink(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return false;
  }
}

/** The metadata as it is stored. */
function metaBytes(meta: unknown): Buffer {
  const json = JSON.stringify(meta);
  if (json === undefined) throw new TypeError('spool metadata must be a JSON value');
  return Buffer.from(json, 'utf8');
}

/** Ids of whole messages (one `.msg`, or both halves of a pair), oldest first (ids sort by time). */
function completeIds(names: string[]): string[] {
  const present = new Set(names);
  const pairs = names
    .filter((name) => name.endsWith(META) && isSpoolId(name.slice(0, -META.length)))
    .map((name) => name.slice(0, -META.length))
    .filter((id) => present.has(id + BODY));
  const ones = names.filter((name) => name.endsWith(ONE) && isSpoolId(name.slice(0, -ONE.length))).map((name) => name.slice(0, -ONE.length));
  return [...pairs, ...ones].sort();
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
