// Whether a claimed recipient's message is tracked, and where its links
// point (docs/tracking.md, "Turning it on"): the send's own `tracking` over
// its from-domain's setting, off when neither says; the domain's custom
// tracking host once its CNAME was found, else the service's public URL.
import { sql } from 'drizzle-orm';
import { domainTracking } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { TrackingOptions } from './rewrite.js';

/** What the claim reads for it (claim.ts), beside the message's columns. */
export type TrackingColumns = {
  /** `outbound_messages.tracking`: the send's own choice. */
  tracking: { opens?: boolean; clicks?: boolean } | null;
  /** The from-domain's row of `domain_tracking`, when it has one. */
  domain_tracking: { opens: boolean; clicks: boolean; host: string | null } | null;
};

/** The claim's select list entries; `m` is the message, `m.domain_id` its domain. */
export const trackingColumns = sql`m.tracking,
      (select jsonb_build_object('opens', t.opens, 'clicks', t.clicks,
                                 'host', case when t.host_verified_at is not null then t.host end)
       from ${domainTracking} t where t.domain_id = m.domain_id) as domain_tracking`;

/** Null when neither opens nor clicks are tracked. */
export function trackingOptions(settings: Pick<Config, 'server.public_url'>, row: TrackingColumns): TrackingOptions | null {
  const opens = row.tracking?.opens ?? row.domain_tracking?.opens ?? false;
  const clicks = row.tracking?.clicks ?? row.domain_tracking?.clicks ?? false;
  if (!opens && !clicks) return null;
  const publicUrl = new URL(settings['server.public_url']);
  const host = row.domain_tracking?.host;
  // A custom host is reached as the service is (https in production; http only where the service itself is).
  const base = host ? `${publicUrl.protocol}//${host}` : publicUrl.origin;
  return { opens, clicks, base };
}
