// The spool's one-file layout (`layout: 'single'`): a message is one file,
// `<id>.msg`, holding its body, then its metadata (JSON), then a trailer of
// fixed length naming the metadata's length. The metadata comes last because
// it is known last (verdicts computed while the body streams in): the body is
// written as it arrives and the metadata appended once it settles, then the
// one file is fsynced and renamed. Against the pair layout (`<id>.eml` and
// `<id>.json`) a message costs one open, fsync, close, rename and unlink
// instead of two of each.
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { SpoolBody } from './write-durably.js';

export const ONE = '.msg';

const MAGIC = 'EDGEMAIL-SPOOL-META';
const DIGITS = 10;
/** `\n<magic> <metadata bytes, 10 digits>\n` */
const TRAILER_BYTES = 1 + MAGIC.length + 1 + DIGITS + 1;

const trailer = (metaBytes: number): Buffer => Buffer.from(`\n${MAGIC} ${String(metaBytes).padStart(DIGITS, '0')}\n`, 'latin1');

/**
 * The file's bytes: every chunk of `body`, then (once `meta` settles) the
 * metadata and the trailer. `sized` is told the body's length before the
 * metadata is awaited. The body's error comes first, as it came.
 */
export async function* bodyThenMeta(body: SpoolBody, meta: PromiseLike<Buffer>, sized: (bytes: number) => void): AsyncGenerator<Uint8Array | string> {
  let bytes = 0;
  for await (const chunk of body instanceof Uint8Array ? [body] : body) {
    bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk, 'utf8') : chunk.byteLength;
    yield chunk;
  }
  sized(bytes);
  const json = await meta;
  yield Buffer.concat([json, trailer(json.length)]);
}

/** The metadata (parsed JSON) and where the body ends, read from the file's tail; ENOENT as the file system throws it. */
export async function readOneFile(path: string): Promise<{ meta: unknown; size: number; openBody(): Readable }> {
  const handle = await open(path, 'r');
  try {
    const { size: total } = await handle.stat();
    const tail = Buffer.alloc(TRAILER_BYTES);
    if (total < TRAILER_BYTES) throw new Error(`spool file ${path} is too short to hold its metadata`);
    await handle.read(tail, 0, TRAILER_BYTES, total - TRAILER_BYTES);
    const text = tail.toString('latin1');
    const metaBytes = Number(text.slice(1 + MAGIC.length + 1, 1 + MAGIC.length + 1 + DIGITS));
    if (!text.startsWith(`\n${MAGIC} `) || !Number.isInteger(metaBytes) || metaBytes > total - TRAILER_BYTES) {
      throw new Error(`spool file ${path} does not end in its metadata`);
    }
    const size = total - TRAILER_BYTES - metaBytes;
    const json = Buffer.alloc(metaBytes);
    await handle.read(json, 0, metaBytes, size);
    return {
      meta: JSON.parse(json.toString('utf8')),
      size,
      openBody: () => (size === 0 ? Readable.from([]) : createReadStream(path, { start: 0, end: size - 1 })),
    };
  } finally {
    await handle.close();
  }
}
