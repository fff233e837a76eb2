/** `read` of an id the spool does not hold (never written, or removed). */
export class SpoolEntryNotFoundError extends Error {
  readonly code = 'SPOOL_ENTRY_NOT_FOUND';
  constructor(readonly id: string) {
    super(`spool entry ${JSON.stringify(id)} not found`);
    this.name = 'SpoolEntryNotFoundError';
  }
}
