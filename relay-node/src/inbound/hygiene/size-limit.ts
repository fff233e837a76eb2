// Bounds what is kept of a message without cutting the client off: SMTP can
// only refuse after the final dot, so the rest of the data is read and dropped.
// `countBytes` (smtp/byte-count.ts) is the one byte limit of the node: SizeLimit
// counts with it, and so does the listeners' message guard (smtp/message-guard.ts).
import { Transform, type TransformCallback } from 'node:stream';
import { countBytes, type ByteCount } from '../../smtp/byte-count.js';
import { MessageTooLargeError } from './hygiene-errors.js';

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
