// Writes a new file and fsyncs it before saying it is done.
import { open, rm } from 'node:fs/promises';
import { plainFsync, type SpoolFsync } from './dir-sync.js';

/** Message bytes: a stream, any (async) iterable of chunks, or one buffer. */
export type SpoolBody = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string> | Uint8Array;

// Small chunks (a line at a time) are gathered into writes of this size, so a
// message costs a few syscalls rather than one per chunk.
const WRITE_BATCH_BYTES = 64 * 1024;

export interface WriteDurablyOptions {
  fsync?: SpoolFsync;
  /**
   * Gives up waiting for a `body` that is still a promise: the file is
   * removed and the write rejects with the signal's reason.
   */
  signal?: AbortSignal;
}

export interface DurableFile {
  /** Bytes written. */
  size: number;
  /**
   * The file is fsynced when the write resolves; closing it goes on in the
   * background (nothing about durability waits for it). Settles once closed.
   */
  closed: Promise<void>;
}

/**
 * Creates `path` (mode 0600, failing if it exists) at once, writes every
 * chunk of `body` (which may still be on its way: a promise is awaited after
 * the file is created, so the creation is not on the path after it), fsyncs
 * it, and resolves to its size. On any failure, including an error from
 * `body`, the file is closed and removed and the error rethrown unchanged (so
 * a typed error from a Transform upstream keeps its type).
 */
export async function writeFileDurably(path: string, body: SpoolBody | PromiseLike<SpoolBody>, options: WriteDurablyOptions = {}): Promise<DurableFile> {
  const fsync = options.fsync ?? plainFsync;
  // Awaited only once the file exists; until then its rejection is not unhandled.
  if (isPromiseLike(body)) body.then(undefined, () => {});
  const handle = await open(path, 'wx', 0o600);
  let size = 0;
  try {
    const chunks = chunksOf(await untilAborted(body, options.signal));
    let batch: Buffer[] = [];
    let batchBytes = 0;
    const flush = async (): Promise<void> => {
      const buf = batch.length === 1 ? batch[0]! : Buffer.concat(batch, batchBytes);
      batch = [];
      batchBytes = 0;
      for (let offset = 0; offset < buf.length; ) {
        const { bytesWritten } = await handle.write(buf, offset, buf.length - offset);
        offset += bytesWritten;
      }
    };
    for await (const chunk of chunks) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (!buf.length) continue;
      batch.push(buf);
      batchBytes += buf.length;
      size += buf.length;
      if (batchBytes >= WRITE_BATCH_BYTES) await flush();
    }
    if (batchBytes) await flush();
    await fsync({ path, kind: 'file' }, () => handle.sync());
  } catch (err) {
    await handle.close().catch(() => {});
    await rm(path, { force: true });
    throw err;
  }
  return { size, closed: handle.close() };
}

function chunksOf(body: SpoolBody): AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string> {
  return body instanceof Uint8Array ? [body] : body;
}

/** `value`, unless `signal` aborts first. */
async function untilAborted<T>(value: T | PromiseLike<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal || !isPromiseLike(value)) return value;
  signal.throwIfAborted();
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([value, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}
