// mailauth 4.13.3 reads `adkim=s` / `aspf=s` from a DMARC record but still
// aligns by organisational domain (its getAlignment falls through to the
// relaxed match), so a signature by `sub.example.com` passes DMARC for
// `example.com` even when the domain asked for strict alignment. This puts
// RFC 7489 section 3.1 back: in strict mode the domains must be identical.
import type { AuthenticateResult } from 'mailauth';
import { addressDomain } from '@edgemail/shared';

/**
 * Whether a DMARC `pass` from mailauth still holds under the record's strict
 * modes. Only ever turns a pass into a fail; relaxed modes are left to mailauth.
 */
export function passesStrictAlignment(result: AuthenticateResult): boolean {
  const record = result.dmarc;
  if (!record || record.status.result !== 'pass') return true;
  const { dkim, spf } = record.alignment;
  if (!dkim.strict && !spf.strict) return true;
  const from = addressDomain(result.dkim.headerFrom?.[0] ?? '');
  const dkimAligned = dkim.strict
    ? (result.dkim.results ?? []).some((r) => r.status.result === 'pass' && sameDomain(r.signingDomain, from))
    : !!dkim.result;
  const spfAligned = spf.strict
    ? !!result.spf && result.spf.status.result === 'pass' && sameDomain(result.spf.domain, from)
    : !!spf.result;
  return dkimAligned || spfAligned;
}

function sameDomain(a: string | undefined, b: string): boolean {
  const norm = (d: string) => d.toLowerCase().replace(/\.$/, '');
  return !!a && !!b && norm(a) === norm(b);
}
