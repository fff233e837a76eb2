// Spool ids: unique, sortable by arrival, and safe as file names.
import { randomBytes } from 'node:crypto';

const SPOOL_ID = /^[0-9a-f]{16}-[0-9a-f]{12}$/;
let lastMs = 0;
let sequence = 0;

/**
 * A new id: 12 hex digits of milliseconds since the epoch and 4 of a
 * per-process sequence (so ids of one process sort in the order they were
 * made, even within a millisecond or if the clock steps back), then 12 random
 * hex digits (so two processes never collide).
 *
 * @example createSpoolId() // '019ab3c4d5e60000-5f2a9c0d41e7'
 */
export function createSpoolId(): string {
  let ms = Date.now();
  if (ms <= lastMs) {
    ms = lastMs;
    sequence += 1;
    if (sequence > 0xffff) {
      ms += 1;
      sequence = 0;
    }
  } else {
    sequence = 0;
  }
  lastMs = ms;
  const time = ms.toString(16).padStart(12, '0') + sequence.toString(16).padStart(4, '0');
  return `${time}-${randomBytes(6).toString('hex')}`;
}

/** True for a string shaped like a spool id (and so safe to join to a path). */
export function isSpoolId(text: string): boolean {
  return SPOOL_ID.test(text);
}

/** When the id was made (for the age of the oldest pending message). */
export function spoolIdTime(id: string): Date {
  return new Date(Number.parseInt(id.slice(0, 12), 16));
}
