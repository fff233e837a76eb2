// The HTML a claimed recipient's job carries: its message's, rewritten for
// tracking when the send or its domain asks (options.ts, rewrite.ts). Called
// by the claim (delivery/jobs.ts) for each recipient, so every recipient's
// links carry tokens of their own email.
import type { Config } from '@edgemail/shared';
import { trackHtml } from './rewrite.js';
import { trackingOptions, type TrackingColumns } from './options.js';

export async function trackedHtml(
  settings: Pick<Config, 'server.public_url' | 'database.crypto.encryption_key'>,
  row: TrackingColumns & { id: string; html: string | null },
): Promise<string | null> {
  if (row.html === null) return null;
  const options = trackingOptions(settings, row);
  return options ? trackHtml(settings, row.html, row.id, options) : row.html;
}
