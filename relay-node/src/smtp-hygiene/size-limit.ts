// Bounds what is kept of a message without cutting the client off: SMTP can
// only refuse after the final dot, so the rest of the data is read and dropped.
import { Transform, type TransformCallback } from 'node:stream';
import { MessageTooLargeError } from './hygiene-errors.js';

/**
 * A Transform that passes bytes through until more than `maxBytes` have been
 * seen; from then on it passes nothing (so nothing more is buffered or
 * written) but keeps reading, and fails with a MessageTooLargeError once the
 * input has ended. A chunk that crosses the limit is dropped whole.
 */
export class SizeLimit extends Transform {
  /** Bytes read so far, kept or not. */
  bytesSeen = 0;
  /** True from the first byte past the limit. */
  exceeded = false;

  constructor(readonly maxBytes: number) {
    super();
    if (!(maxBytes >= 0) || (Number.isFinite(maxBytes) && !Number.isInteger(maxBytes))) {
      throw new RangeError(`size limit must be a whole number of bytes or Infinity, got ${maxBytes}`);
    }
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytesSeen += chunk.length;
    if (this.bytesSeen > this.maxBytes) this.exceeded = true;
    if (this.exceeded) return callback();
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
