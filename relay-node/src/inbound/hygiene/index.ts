export { BareLineEndingError, MessageTooLargeError } from './hygiene-errors.js';
export { createLineEndingNormalizer, LineEndingNormalizer, type BareLineEndingMode } from './line-endings.js';
export { createSizeLimit, SizeLimit } from './size-limit.js';
