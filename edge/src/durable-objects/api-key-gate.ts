// One project API key's gate (`idFromName(hex(sha256(token)))`): a request
// presenting the key makes one call here, which counts it in the key's rate
// window and looks the key up, instead of a RateLimiter call beside a look-up
// of its own. Nothing is cached: every answer comes from a read of PostgreSQL
// that began after the request reached this object, so a revocation, deletion
// or any change to the row (through the API or straight in the database) holds
// for every request that starts after it committed. What the object saves is
// round trips under load: requests for the key that arrive while a read is
// running share the next read (Coalescer), one round trip for all of them.
// A made-up token gets an object of its own like any other, holding only an
// in-memory window (no storage) and making one read per request or fewer.
import { DurableObject } from 'cloudflare:workers';
import { FixedWindow } from '@edgemail/shared';
import { connect } from '../db/client.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { settingsOf } from '../settings.js';
import { findApiKey, type ApiKeyRow } from '../services/auth/find-credential.js';
import { Coalescer } from './coalescer.js';
import type { ApiKeyAdmission, ApiKeyGateRpc, Bindings } from '../env.js';

/** A request waiting for the read of its batch. */
interface Waiting { keyPrefix: string; tokenHash: string; key?: ApiKeyRow | null }

export class ApiKeyGate extends DurableObject<Bindings> implements ApiKeyGateRpc {
  private readonly window = new FixedWindow();

  private readonly reads = new Coalescer<Waiting>(async (waiting) => {
    const { config } = settingsOf(this.env);
    const db = connect(config['database.url'], this.env.LOCAL_NEON_BRIDGE);
    // Every caller presents the same token (this object is named by its hash).
    const { keyPrefix, tokenHash } = waiting[0]!;
    const key = await findApiKey(db, keyPrefix, tokenHash);
    for (const w of waiting) w.key = key;
  });

  async admit(keyPrefix: string, tokenHash: string, limit: number | null, windowMs: number): Promise<ApiKeyAdmission> {
    // Counted on arrival, before any await, as the RateLimiter counts.
    const verdict = limit === null ? null : this.window.hit(limit, windowMs);
    // A refused request goes no further, so its key is not read.
    if (verdict && !verdict.allowed) return { verdict, key: null };
    const waiting: Waiting = { keyPrefix, tokenHash };
    try {
      await this.reads.add([waiting]);
    } catch (e) {
      // Said, not thrown: a throw is logged by the runtime on every request of an outage,
      // which the Worker logs once (db/outage.ts) when its own look-up fails alike.
      if (isDatabaseUnavailable(e)) return { verdict, key: null, databaseUnavailable: true };
      throw e;
    }
    return { verdict, key: waiting.key ?? null };
  }
}
