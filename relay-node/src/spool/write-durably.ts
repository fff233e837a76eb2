// Writes a new file and fsyncs it before saying it is done.
import { open, rm } from 'node:fs/promises';

/** Message bytes: a stream, any (async) iterable of chunks, or one buffer. */
export type SpoolBody = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string> | Uint8Array;

// Small chunks (a line at a time) are gathered into writes of this size, so a
// message costs a few syscalls rather than one per chunk.
const WRITE_BATCH_BYTES = 64 * 1024;

/**
 * Creates `path` (mode 0600, failing if it exists), writes every chunk of
 * `body`, fsyncs and closes it, and resolves to its size. On any failure,
 * including an error from `body`, the file is removed and the error rethrown
 * unchanged (so a typed error from a Transform upstream keeps its type).
 */
export async function writeFileDurably(path: string, body: SpoolBody): Promise<number> {
  const handle = await open(path, 'wx', 0o600);
  let size = 0;
  try {
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
    for await (const chunk of chunksOf(body)) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (!buf.length) continue;
      batch.push(buf);
      batchBytes += buf.length;
      size += buf.length;
      if (batchBytes >= WRITE_BATCH_BYTES) await flush();
    }
    if (batchBytes) await flush();
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => {});
    await rm(path, { force: true });
    throw err;
  }
  await handle.close();
  return size;
}

function chunksOf(body: SpoolBody): AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string> {
  return body instanceof Uint8Array ? [body] : body;
}
