export { BareLineEndingError, MessageTooLargeError } from './hygiene-errors.js';
export { createLineEndingNormalizer, LineEndingNormalizer, type BareLineEndingMode } from './line-endings.js';
export { countBytes, createSizeLimit, SizeLimit, type ByteCount } from './size-limit.js';
