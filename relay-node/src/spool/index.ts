export { openSpool, type Spool, type SpoolEntry } from './open-spool.js';
export { SpoolEntryNotFoundError } from './spool-errors.js';
export { createSpoolId, isSpoolId, spoolIdTime } from './spool-id.js';
export type { SpoolBody } from './write-durably.js';
