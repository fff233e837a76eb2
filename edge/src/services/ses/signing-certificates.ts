// SNS signing certificates, fetched from a message's SigningCertURL (already
// checked by sns-urls.ts) and kept per isolate: SNS signs with one
// certificate per region for months, so a busy endpoint fetches it once.
import { LruCache } from '@edgemail/shared';
import { certificatePublicKeyInfo, certificateValidity, DerError, pemBlocks } from '../../crypto/pem.js';
import { invalid, ServiceError, unavailable } from '../errors.js';

/** A certificate is kept this long after its fetch (and never past its notAfter): a rotated one is picked up within a day. */
export const CERTIFICATE_TTL_MS = 24 * 60 * 60 * 1000;
/** URLs kept per isolate: SNS has one per region (plus the odd rotation), so a few dozen cover any installation. */
const CAPACITY = 32;
const FETCH_TIMEOUT_MS = 10_000;
/** A PEM certificate is a few kB; anything much larger is not one. */
const MAX_PEM_BYTES = 64 * 1024;

export interface SigningCertificate { spki: Uint8Array<ArrayBuffer>; notBefore: Date; notAfter: Date; fetchedAt: number }

// Promises, so that concurrent messages naming one URL share one fetch; a failed fetch is not kept.
const cache = new LruCache<string, Promise<SigningCertificate>>(CAPACITY);

/** The certificate at `url`, from the cache while fresh. Throws `unavailable` (fetch failed) or `invalid` (not a certificate). */
export async function signingCertificate(url: URL, now = Date.now()): Promise<SigningCertificate> {
  const key = url.href;
  const cached = cache.get(key);
  if (cached) {
    const certificate = await cached.catch(() => null);
    if (certificate && now - certificate.fetchedAt < CERTIFICATE_TTL_MS && now <= certificate.notAfter.getTime()) return certificate;
    if (cache.get(key) === cached) cache.delete(key);
  }
  const pending = fetchCertificate(url, now);
  cache.set(key, pending);
  pending.catch(() => { if (cache.get(key) === pending) cache.delete(key); });
  return pending;
}

async function fetchCertificate(url: URL, now: number): Promise<SigningCertificate> {
  let pem: string;
  try {
    const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (res.status !== 200) {
      await res.body?.cancel();
      throw unavailable(`SigningCertURL answered ${res.status}`);
    }
    const declared = Number(res.headers.get('content-length') ?? 0);
    if (declared > MAX_PEM_BYTES) throw invalid(`SigningCertURL is not a certificate (${declared} bytes)`);
    pem = await res.text();
  } catch (e) {
    if (e instanceof ServiceError) throw e;
    throw unavailable(`SigningCertURL could not be fetched (${e instanceof Error ? e.message : String(e)})`);
  }
  const block = pem.length <= MAX_PEM_BYTES ? pemBlocks(pem).find((b) => b.label === 'CERTIFICATE') : undefined;
  if (!block) throw invalid('SigningCertURL is not a PEM certificate');
  try {
    return { spki: Uint8Array.from(certificatePublicKeyInfo(block.der)), ...certificateValidity(block.der), fetchedAt: now };
  } catch (e) {
    if (e instanceof DerError) throw invalid('SigningCertURL is not a readable X.509 certificate');
    throw e;
  }
}
