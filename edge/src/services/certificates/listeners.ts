// The SMTP listeners a certificate can be assigned to, and whether each has
// TLS on. Listeners run on relay nodes; the edge reads the same settings the
// nodes are started with (`pnpm dev` passes one environment to both), so a
// listener with TLS off is shown as such and does not hold its certificate.
import { TLS_LISTENERS, type TlsListener } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';

export { TLS_LISTENERS, type TlsListener };

// A node's `inbound` listener (its MX) is configured by `relay_node.inbound.*`.
const TLS_SETTING = {
  inbound: 'relay_node.inbound.tls.enabled',
  submission: 'submission.tls.enabled',
} as const satisfies Record<TlsListener, keyof Config>;

export function isTlsListener(name: string): name is TlsListener {
  return (TLS_LISTENERS as readonly string[]).includes(name);
}

/** Whether `listener` offers TLS at all; with it off an assignment is kept but nothing is presented. */
export function listenerTlsEnabled(config: Config, listener: TlsListener): boolean {
  return config[TLS_SETTING[listener]];
}
