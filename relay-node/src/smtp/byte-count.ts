// The one byte limit of the node: the listeners' message guard counts with it,
// and so does the inbound path's SizeLimit (inbound/hygiene/size-limit.ts).

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
