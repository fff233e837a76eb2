export { openSpool, type Spool, type SpoolEntry, type SpoolOptions } from './open-spool.js';
export type { SpoolFsync } from './dir-sync.js';
export { SpoolEntryNotFoundError } from './spool-errors.js';
export { createSpoolId, isSpoolId, spoolIdTime } from './spool-id.js';
export type { SpoolBody } from './write-durably.js';
