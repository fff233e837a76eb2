// SPF, DKIM and DMARC of one message with mailauth 4.13 (the last line that
// runs on Node 20), reduced to the spec's `auth` object. This runs inside a
// verification worker (verify-worker.ts): the hashing and RSA work stay off
// the listener's event loop.
import { authenticate as mailauthAuthenticate, dmarc as mailauthDmarc, type AuthenticateResult, type DNSResolver } from 'mailauth';
import type { Readable } from 'node:stream';
import { uncheckedSignatures } from './dkim-limits.js';
import { passesStrictAlignment } from './strict-alignment.js';
import { isDmarcPolicy, toVerdict, type AuthContext, type AuthVerdict, type DmarcPolicy, type IngestAuthentication } from './verdicts.js';

// The order in which a failing signature speaks for the message when none passes:
// a signature that fails outright says more than one that could not be checked.
const DKIM_PRECEDENCE: readonly AuthVerdict[] = ['pass', 'fail', 'temperror', 'permerror', 'neutral', 'policy', 'none'];

/**
 * Reads `message` to its end and answers its verdicts. Rejects when the
 * message stream fails; DNS trouble is mailauth's `temperror`, not a rejection.
 *
 * @example const verdicts = await verifyMessage(stream, { ip, helo, sender }, { resolver, mta: 'mx1.example.com' });
 */
export async function verifyMessage(message: Readable, context: AuthContext, options: { resolver: DNSResolver; mta: string }): Promise<IngestAuthentication> {
  const result = await mailauthAuthenticate(message, {
    ip: context.ip,
    helo: context.helo || undefined,
    sender: context.sender || undefined,
    mta: options.mta,
    resolver: options.resolver,
    // ARC is not part of the record, and BIMI fetches logos over HTTPS:
    // neither belongs on the path of every SMTP reply.
    disableArc: true,
    disableBimi: true,
  });
  return toIngestAuthentication(result, context.ip, options.resolver);
}

async function toIngestAuthentication(result: AuthenticateResult, ip: string, resolver: DNSResolver): Promise<IngestAuthentication> {
  const spf = result.spf ? toVerdict(result.spf.status.result) : 'none';
  const dkim = dkimVerdict(result);
  const fromCount = result.dkim.headerFrom?.length ?? 0;
  const record = result.dmarc || null;
  const strictFailure = !passesStrictAlignment(result);
  // Several From addresses (or none) leave DMARC without an identity to check:
  // RFC 7489 section 6.6.1 treats several as a reason to refuse, so permerror.
  const dmarc: AuthVerdict = strictFailure ? 'fail' : record ? toVerdict(record.status.result) : fromCount > 1 ? 'permerror' : 'none';
  const dmarcPolicy = record && record.status.result !== 'none' ? policyOf(record.policy) : null;
  const pct = record && record.pct !== undefined ? Number(record.pct) : 100;
  return {
    auth: {
      spf,
      dkim,
      dmarc,
      aligned: dmarc === 'pass' || (dmarc !== 'fail' && fromCount === 1 && (await defaultAlignment(result, resolver))),
      client_ip: ip,
    },
    dmarcPolicy,
    // pct below 100 asks for sampling; we apply the next lower policy to every message instead.
    dmarcReject: dmarc === 'fail' && dmarcPolicy === 'reject' && pct >= 100,
    // Keep the stored header in step with the verdict when strict alignment overturned mailauth's pass.
    headers: strictFailure ? result.headers.replace(/\bdmarc=pass\b/, 'dmarc=fail (strict alignment)') : result.headers,
  };
}

/** The signatures that were checked decide; the note about those past the limit does not. */
function dkimVerdict(result: AuthenticateResult): AuthVerdict {
  const verdicts = (result.dkim.results ?? []).filter((r) => !uncheckedSignatures(r)).map((r) => toVerdict(r.status.result));
  return DKIM_PRECEDENCE.find((v) => verdicts.includes(v)) ?? 'none';
}

function policyOf(p: string | undefined): DmarcPolicy | null {
  const policy = p?.toLowerCase();
  return isDmarcPolicy(policy) ? policy : null;
}

/**
 * Alignment when the From domain publishes no usable DMARC record (none,
 * temperror, permerror): DMARC's own rule with its defaults (relaxed
 * alignment, RFC 7489 section 6.3), by running mailauth's DMARC step
 * against a synthetic `v=DMARC1; p=none` record. A signature or SPF pass for
 * an unrelated domain still does not align.
 */
async function defaultAlignment(result: AuthenticateResult, resolver: DNSResolver): Promise<boolean> {
  const spfDomain = result.spf && result.spf.status.result === 'pass' ? [result.spf.domain] : [];
  const dkimDomains = (result.dkim.results ?? []).filter((r) => r.status.result === 'pass')
    .map((r) => ({ domain: r.signingDomain, aligned: r.status.aligned, underSized: r.status.underSized }));
  if (!spfDomain.length && !dkimDomains.length) return false;
  const defaults: DNSResolver = async (name, rrtype) => {
    if (rrtype === 'TXT' && name.startsWith('_dmarc.')) return [['v=DMARC1; p=none']];
    return resolver(name, rrtype);
  };
  const verdict = await mailauthDmarc({ headerFrom: result.dkim.headerFrom, spfDomains: spfDomain, dkimDomains, resolver: defaults });
  return !!verdict && verdict.status.result === 'pass';
}
