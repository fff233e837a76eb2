// One SecureContext per certificate of the edge's bundle, built when a bundle
// arrives (never per handshake) and kept across bundles for as long as the
// same pair is in them: a context costs a key parse and a chain build, a
// handshake only a Map lookup.
import { createHash } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { CertificateBundle } from '@edgemail/shared';
import type { Log } from '../log.js';

/** A certificate of the bundle that loaded. */
export interface LoadedCertificate {
  name: string;
  kind: string;
  /** RFC 3339. */
  notAfter: string;
  context: SecureContext;
}

export interface CertificateContexts {
  /**
   * The loaded certificates of `bundle` by name. A pair that does not load
   * (garbage PEM, a key that does not match) is left out with a warning; the
   * others load regardless.
   */
  load(bundle: CertificateBundle): Map<string, LoadedCertificate>;
}

/** What identifies a pair: the same PEMs make the same context. */
function pairKey(certificate: string, privateKey: string): string {
  return createHash('sha256').update(certificate).update('\0').update(privateKey).digest('hex');
}

export function createCertificateContexts(log: Log, build: typeof createSecureContext = createSecureContext): CertificateContexts {
  // Contexts of the last bundle, by pairKey: what the next bundle may reuse.
  let byPair = new Map<string, SecureContext>();
  return {
    load(bundle) {
      const next = new Map<string, SecureContext>();
      const loaded = new Map<string, LoadedCertificate>();
      for (const [name, entry] of Object.entries(bundle.certificates)) {
        const key = pairKey(entry.certificate, entry.private_key);
        let context = next.get(key) ?? byPair.get(key);
        if (!context) {
          try {
            context = build({ cert: entry.certificate, key: entry.private_key });
          } catch (err) {
            log.warn('a certificate from the edge does not load; skipped (the others are presented as usual)', { certificate: name, kind: entry.kind, error: (err as Error).message });
            continue;
          }
        }
        next.set(key, context);
        loaded.set(name, { name, kind: entry.kind, notAfter: entry.not_after, context });
      }
      byPair = next;
      return loaded;
    },
  };
}
