// Bounds what is kept of a message without cutting the client off: SMTP can
// only refuse after the final dot, so the rest of the data is read and dropped.
// `countBytes` is the one byte limit of the node: SizeLimit counts with it, and
// so does the listener's message guard (smtp/message-guard.ts).
import { Transform, type TransformCallback } from 'node:stream';
import { MessageTooLargeError } from './hygiene-errors.js';

/** Bytes counted against a limit, over it from the first byte past `maxBytes`. */
export interface ByteCount {
  readonly maxBytes: number;
  /** Bytes counted so far. */
  readonly seen: number;
  /** True from the first byte past the limit. */
  readonly exceeded: boolean;
  /** Counts `bytes` more; true while all that was counted fits. */
  add(bytes: number): boolean;
}

/**
 * @param maxBytes a whole number of bytes, or Infinity (RangeError otherwise)
 * @example const size = countBytes(maxMessageSize); if (!size.add(chunk.length)) refuse();
 */
export function countBytes(maxBytes: number): ByteCount {
  if (!(maxBytes >= 0) || (Number.isFinite(maxBytes) && !Number.isInteger(maxBytes))) {
    throw new RangeError(`size limit must be a whole number of bytes or Infinity, got ${maxBytes}`);
  }
  let seen = 0;
  return {
    maxBytes,
    get seen() { return seen; },
    get exceeded() { return seen > maxBytes; },
    add(bytes) {
      seen += bytes;
      return seen <= maxBytes;
    },
  };
}

/**
 * A Transform that passes bytes through until more than `maxBytes` have been
 * seen; from then on it passes nothing (so nothing more is buffered or
 * written) but keeps reading, and fails with a MessageTooLargeError once the
 * input has ended. A chunk that crosses the limit is dropped whole.
 */
export class SizeLimit extends Transform {
  private readonly counted: ByteCount;

  constructor(readonly maxBytes: number) {
    super();
    this.counted = countBytes(maxBytes);
  }

  /** Bytes read so far, kept or not. */
  get bytesSeen(): number {
    return this.counted.seen;
  }

  /** True from the first byte past the limit. */
  get exceeded(): boolean {
    return this.counted.exceeded;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (!this.counted.add(chunk.length)) return callback();
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    callback(this.exceeded ? new MessageTooLargeError(this.maxBytes, this.bytesSeen) : undefined);
  }
}

/** @example pipeline(data, createSizeLimit(config['inbound.max_message_size']), sink) */
export function createSizeLimit(maxBytes: number): SizeLimit {
  return new SizeLimit(maxBytes);
}
