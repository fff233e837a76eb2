// The spec's listener certificate resolution, per handshake: (1) the
// certificate assigned to the listener; (2) ACME, when this node's
// `acme.enabled` is on, the SNI name is in its `acme.hosts` and the bundle has
// that host's certificate; (3) the self-signed pair shared by all nodes. A
// certificate that did not load counts as absent: the next step answers.
// A client without SNI gets (1), else (3): ACME needs the name.
import type { CertificateBundle } from '@edgemail/shared';
import type { LoadedCertificate } from './certificate-contexts.js';

export type CertificateSource = 'assigned' | 'acme' | 'self_signed';

export interface ResolvedCertificate {
  source: CertificateSource;
  certificate: LoadedCertificate;
}

/** This node's ACME settings (`acme.enabled`, `acme.hosts`). */
export interface AcmeChoice {
  enabled: boolean;
  /** Lower case. */
  hosts: ReadonlySet<string>;
}

export interface Resolvable {
  bundle: CertificateBundle;
  loaded: ReadonlyMap<string, LoadedCertificate>;
}

/** @example resolveCertificate(current, 'inbound', 'mx1.example.net', acme)?.certificate.context */
export function resolveCertificate(
  from: Resolvable, listener: string, servername: string | undefined, acme: AcmeChoice,
): ResolvedCertificate | null {
  const assigned = from.bundle.listeners[listener];
  const one = assigned ? from.loaded.get(assigned) : undefined;
  if (one) return { source: 'assigned', certificate: one };
  if (servername && acme.enabled) {
    const host = servername.toLowerCase();
    const name = acme.hosts.has(host) ? from.bundle.acme[host] : undefined;
    const two = name ? from.loaded.get(name) : undefined;
    if (two) return { source: 'acme', certificate: two };
  }
  const three = from.bundle.self_signed ? from.loaded.get(from.bundle.self_signed) : undefined;
  return three ? { source: 'self_signed', certificate: three } : null;
}

/** The hosts a listener answers with an ACME certificate (when there is no assignment): for the heartbeat. */
export function acmeHostsServed(from: Resolvable, listener: string, acme: AcmeChoice): string[] {
  if (!acme.enabled) return [];
  const assigned = from.bundle.listeners[listener];
  if (assigned && from.loaded.has(assigned)) return [];
  return [...acme.hosts].filter((host) => {
    const name = from.bundle.acme[host];
    return name !== undefined && from.loaded.has(name);
  }).sort();
}
