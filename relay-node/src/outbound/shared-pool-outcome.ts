// What a tenant is told about a delivery through the shared SMTP pool. The
// pool is the operator's: its host names, addresses and its servers' own
// words (banners, error texts naming internal hosts) belong in the relay
// node's log, not in a tenant's email log or webhooks. The reply code and the
// enhanced status code stay: they are what the tenant acts on (a `550 5.1.1`
// is still a hard bounce).
import { enhancedCode, formatEnhancedCode } from '@edgemail/shared';
import type { DeliveryOutcome } from './deliver.js';

/** The `server` every pool attempt shows. */
export const SHARED_POOL_SERVER = 'shared pool';

/**
 * The outcome with a neutral server name and a generic reply that keeps only
 * the reply code and its enhanced status code.
 *
 * @example sharedPoolOutcome({ outcome: 'failed', smtp_code: 550, reply: '550 5.1.1 <a@b>: unknown at relay7.corp.internal', server: 'relay7.corp.internal:587' })
 * // { outcome: 'failed', smtp_code: 550, reply: '550 5.1.1 the shared pool refused the message (details in the relay node\'s log)', server: 'shared pool' }
 */
export function sharedPoolOutcome(o: Omit<DeliveryOutcome, 'tried'>): Omit<DeliveryOutcome, 'tried'> {
  const details = '(details in the relay node\'s log)';
  if (o.smtp_code === null) {
    const what = o.outcome === 'failed' ? 'the shared pool did not take the message' : 'the shared pool could not be reached or did not answer';
    return { ...o, server: SHARED_POOL_SERVER, reply: `${what} ${details}` };
  }
  const enhanced = enhancedCode(o.reply);
  const code = enhanced ? `${o.smtp_code} ${formatEnhancedCode(enhanced)}` : String(o.smtp_code);
  const what = o.outcome === 'sent' ? 'accepted by the shared pool'
    : o.outcome === 'failed' ? 'the shared pool refused the message' : 'the shared pool deferred the message';
  return { ...o, server: SHARED_POOL_SERVER, reply: `${code} ${what} ${details}` };
}
