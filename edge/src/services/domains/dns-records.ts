// The DNS records a sending domain publishes, and how an answer from the
// resolver is judged against each. Pure: the lookups are in check.ts.
// Decisions (docs/sending.md, "Domains"):
// - DKIM TXT at `<selector>._domainkey.<domain>`: required; passes when a TXT
//   value there carries exactly our `p=` (whitespace ignored).
// - SPF TXT at the domain: required; passes when exactly one `v=spf1` record is
//   published (two are a permerror, RFC 7208 4.5). Its contents are not
//   matched: a flattened or nested record authorises our hosts without naming
//   them. The suggested value includes the public host, where the operator
//   publishes the relay nodes' outbound addresses.
// - DMARC TXT at `_dmarc.<domain>`: a suggestion (`p=none`); reported, never required.
// - MX at the domain pointing at the public host: needed for receiving only.
//   An MX names a host, never an address (RFC 5321 5.1; receivers ignore
//   `10 127.0.0.1`), so a public host that is an address (`pnpm dev`) gets no
//   MX suggestion: the operator publishes an A record under a name and sets
//   `server.public_url` to it.
import { parseIp } from '@edgemail/shared';
import type { Config } from '@edgemail/shared';
import type { DnsRecord } from '../../net/doh.js';
import { dkimTxtValue, type DkimAlgorithm } from '../../crypto/dkim-keys.js';

export const RECORD_PURPOSES = ['dkim', 'spf', 'dmarc', 'mx'] as const;
export type RecordPurpose = (typeof RECORD_PURPOSES)[number];
export type RecordStatus = 'pending' | 'ok' | 'missing' | 'mismatch';
export const MX_PRIORITY = 10;

/** One record's verdict as stored in `domains.verification` (key: its purpose). */
export interface Verdict { ok: boolean; found?: string[]; problem?: 'missing' | 'mismatch' }

/**
 * `domains.verification`: a verdict per purpose, plus `failed` while the
 * domain has lost required records since it was verified (what tells `failed`
 * from `pending` once `verified_at` is cleared).
 */
export type Verification = Partial<Record<RecordPurpose, Verdict>> & { failed?: { ok: false; problem: string } };

export interface ExpectedRecord {
  type: 'TXT' | 'MX';
  name: string;
  value: string;
  purpose: RecordPurpose;
  required: boolean;
}

/** What the records are made from: the domain's name and key. */
export interface DomainKeyFacts {
  name: string;
  dkimSelector: string | null;
  dkimAlgorithm: string | null;
  dkimPublicKey: string | null;
}

/** The host of `server.public_url`, without IPv6 brackets: where relay nodes are reached. */
export function publicHost(settings: Pick<Config, 'server.public_url'>): string {
  return new URL(settings['server.public_url']).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/** SPF for the public host: an `include:` of its own policy, or `ip4:`/`ip6:` when the host is an address. */
export function spfValue(host: string): string {
  const ip = parseIp(host);
  if (!ip) return `v=spf1 include:${host} ~all`;
  return `v=spf1 ${ip.kind() === 'ipv4' ? 'ip4' : 'ip6'}:${ip.toString()} ~all`;
}

export const dkimRecordName = (selector: string, domain: string) => `${selector}._domainkey.${domain}`;

/**
 * The records to publish, DKIM first; without DKIM while the domain has no key
 * yet (made at its first verify), without MX when `host` is an IP address.
 */
export function expectedRecords(domain: DomainKeyFacts, host: string): ExpectedRecord[] {
  const records: ExpectedRecord[] = [];
  if (domain.dkimSelector && domain.dkimAlgorithm && domain.dkimPublicKey) {
    records.push({
      type: 'TXT', name: dkimRecordName(domain.dkimSelector, domain.name), purpose: 'dkim', required: true,
      value: dkimTxtValue(domain.dkimAlgorithm as DkimAlgorithm, domain.dkimPublicKey),
    });
  }
  records.push(
    { type: 'TXT', name: domain.name, value: spfValue(host), purpose: 'spf', required: true },
    { type: 'TXT', name: `_dmarc.${domain.name}`, value: 'v=DMARC1; p=none', purpose: 'dmarc', required: false },
  );
  if (!parseIp(host)) records.push({ type: 'MX', name: domain.name, value: `${MX_PRIORITY} ${host}`, purpose: 'mx', required: false });
  return records;
}

const noSpace = (text: string) => text.replace(/\s+/g, '');

/** The value of a `tag=value` in a DKIM key record (RFC 6376 3.6.1), whitespace removed. */
function dkimTag(record: string, tag: string): string | undefined {
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === tag) return noSpace(part.slice(eq + 1));
  }
  return undefined;
}

const hostOf = (name: string) => name.trim().toLowerCase().replace(/\.$/, '');

/**
 * Judges what the resolver found for one record. `records` is empty for
 * NXDOMAIN and NODATA alike; TXT data arrives with its strings joined.
 */
export function judge(expected: ExpectedRecord, records: DnsRecord[]): Verdict {
  const values = records.map((r) => r.data);
  const verdict = (ok: boolean, found: string[], problem?: 'missing' | 'mismatch'): Verdict =>
    ({ ok, ...(found.length ? { found } : {}), ...(problem ? { problem } : {}) });
  switch (expected.purpose) {
    case 'dkim': {
      if (!values.length) return verdict(false, [], 'missing');
      const ours = dkimTag(expected.value, 'p')!;
      return values.some((v) => dkimTag(v, 'p') === ours) ? verdict(true, values) : verdict(false, values, 'mismatch');
    }
    case 'spf': {
      const spf = values.filter((v) => /^v=spf1(\s|$)/i.test(v.trim()));
      if (!spf.length) return verdict(false, [], 'missing');
      return spf.length === 1 ? verdict(true, spf) : verdict(false, spf, 'mismatch');
    }
    case 'dmarc': {
      const dmarc = values.filter((v) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(v.trim()));
      if (!dmarc.length) return verdict(false, [], 'missing');
      return dmarc.length === 1 ? verdict(true, dmarc) : verdict(false, dmarc, 'mismatch');
    }
    case 'mx': {
      if (!values.length) return verdict(false, [], 'missing');
      const ours = hostOf(expected.value.replace(/^\d+\s+/, ''));
      const targets = values.map((v) => hostOf(v.replace(/^\d+\s+/, '')));
      return targets.includes(ours) ? verdict(true, values) : verdict(false, values, 'mismatch');
    }
  }
}

export const recordStatus = (verdict: Verdict | undefined): RecordStatus =>
  !verdict ? 'pending' : verdict.ok ? 'ok' : verdict.problem === 'mismatch' ? 'mismatch' : 'missing';

const MISMATCH_TEXT: Record<RecordPurpose, string> = {
  dkim: 'holds another key',
  spf: 'is published more than once',
  dmarc: 'is published more than once',
  mx: 'points elsewhere',
};

/** `DKIM record em202611._domainkey.acme.test is missing`: one failing record, for messages. */
export function describeProblem(purpose: RecordPurpose, name: string, verdict: Verdict | undefined): string {
  const what = !verdict ? 'has not been checked' : verdict.problem === 'mismatch' ? MISMATCH_TEXT[purpose] : 'is missing';
  return `${purpose.toUpperCase()} record ${name} ${what}`;
}

/**
 * The first required record that does not pass, described; null when all pass.
 * Only DKIM and SPF are required, and neither depends on settings.
 */
export function firstRequiredProblem(domain: DomainKeyFacts, verification: Verification | null): string | null {
  if (!domain.dkimSelector) return describeProblem('dkim', dkimRecordName('<selector>', domain.name), undefined);
  const required: [RecordPurpose, string][] = [['dkim', dkimRecordName(domain.dkimSelector, domain.name)], ['spf', domain.name]];
  for (const [purpose, name] of required) {
    const verdict = verification?.[purpose];
    if (!verdict?.ok) return describeProblem(purpose, name, verdict);
  }
  return null;
}
