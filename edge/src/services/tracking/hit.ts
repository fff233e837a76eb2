// One request to a tracking endpoint: the token checked (one HMAC), the
// requester classified, the event queued for the batched write (record.ts).
// Nothing here waits on the database, and nothing from the request is ever
// written into the answer: a pixel is fixed bytes, a click a Location taken
// from the signed token only.
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import type { Bindings } from '../../env.js';
import { classify } from './classify.js';
import { queueTrackingEvent } from './record.js';
import { verifyToken, type TrackingClaim, type TrackingKind } from './token.js';

export interface Hit {
  kind: TrackingKind;
  token: string;
  method: string;
  userAgent: string | undefined;
  clientIp: string;
}

export interface HitContext {
  env: Bindings;
  db: Db;
  config: Pick<Config, 'database.crypto.encryption_key' | 'tracking.machine_window'>;
  waitUntil: (p: Promise<unknown>) => void;
}

/** The token's claim once the event is queued; null for a token this installation did not sign (nothing queued). */
export async function trackHit(ctx: HitContext, hit: Hit, now = Date.now()): Promise<TrackingClaim | null> {
  const claim = await verifyToken(ctx.config, hit.kind, hit.token);
  if (!claim) return null;
  const verdict = classify({
    method: hit.method, userAgent: hit.userAgent, clientIp: hit.clientIp,
    secondsSinceIssue: now / 1000 - claim.issuedAt,
  }, ctx.config['tracking.machine_window'] / 1000);
  queueTrackingEvent(ctx.env, ctx.db, ctx.waitUntil, {
    kind: claim.kind, emailId: claim.emailId,
    linkIndex: claim.kind === 'click' ? claim.linkIndex : null, url: claim.kind === 'click' ? claim.url : null,
    machine: verdict.machine, machineReason: verdict.reason, userAgentClass: verdict.userAgentClass, at: new Date(now),
  });
  return claim;
}

/** A transparent 1×1 GIF (43 bytes). */
export const PIXEL = Uint8Array.from(atob('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7'), (c) => c.charCodeAt(0));
