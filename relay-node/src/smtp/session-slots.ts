// Open SMTP sessions at once: all clients together (`max_sessions`) and one
// client address (`max_sessions_per_ip`). Without these one address holds
// idle sessions until the node runs out of file descriptors. Same address
// buckets as the per-minute session rate (session-rate.ts).
import { addressBucket } from '@edgemail/shared';

/** A held place; `release()` gives it back and does nothing the second time. */
export interface SessionSlot {
  release(): void;
}

/** Which cap refused a session. */
export type SessionSlotRefusal = 'total' | 'address';

export interface SessionSlots {
  /** Takes a place for a session from `address`, or says which cap is full (a refusal holds nothing). */
  take(address: string): SessionSlot | { refused: SessionSlotRefusal };
  /** Sessions held now, all together or from `address`'s bucket (for tests and logs). */
  open(address?: string): number;
}

export interface SessionSlotLimits {
  /** Sessions from all clients; 0 disables. */
  maxSessions: number;
  /** Sessions from one address (IPv6: one /64); 0 disables. */
  maxPerAddress: number;
}

/**
 * Counts open sessions. A slot is released exactly once however its session
 * ends, so a cap cannot leak shut: the caller releases on the socket's close
 * and may release again on any other path without harm.
 *
 * @example
 * const slots = createSessionSlots({ maxSessions: 500, maxPerAddress: 20 });
 * const slot = slots.take(connection.remoteAddress);
 * if ('refused' in slot) return refuse(); // 421 4.7.0
 * socket.once('close', () => slot.release());
 */
export function createSessionSlots(limits: SessionSlotLimits): SessionSlots {
  let total = 0;
  const perBucket = new Map<string, number>();
  return {
    take(address) {
      const bucket = addressBucket(address);
      const held = perBucket.get(bucket) ?? 0;
      if (limits.maxSessions > 0 && total >= limits.maxSessions) return { refused: 'total' };
      if (limits.maxPerAddress > 0 && held >= limits.maxPerAddress) return { refused: 'address' };
      total++;
      perBucket.set(bucket, held + 1);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          total--;
          const left = (perBucket.get(bucket) ?? 1) - 1;
          if (left > 0) perBucket.set(bucket, left);
          else perBucket.delete(bucket); // an address with no session costs no memory
        },
      };
    },
    open: (address) => (address === undefined ? total : perBucket.get(addressBucket(address)) ?? 0),
  };
}
