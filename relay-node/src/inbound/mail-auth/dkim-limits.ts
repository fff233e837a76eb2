// Bounds on DKIM verification, put into mailauth 4.13's verifier, which
// checks every DKIM-Signature field and hashes the body once per distinct
// (canonicalization, algorithm, l=) triple: ~2,900 signatures with distinct
// l= on a 1.3 MiB message cost ~20 s of CPU (7 ms per signature per MiB).
// mailauth has no option for either rule, so this wraps two methods of its
// DkimVerifier class (4.13.3 is pinned); it is applied in the verification
// worker only (verify-worker.ts), where nothing else uses mailauth.
import { createRequire } from 'node:module';

/** DKIM-Signature fields checked per message: the first ones from the top of the header block. */
export const MAX_DKIM_SIGNATURES = 10;

interface ParsedHeader { key: string | null; line: Buffer }
interface ParsedHeaders { parsed: ParsedHeader[]; original: Buffer }
interface SignatureResult {
  status: { result: string; comment?: string | false };
  info?: string;
  canonBodyLength?: number;
  canonBodyLengthLimit?: number;
  canonBodyLengthLimited?: boolean;
  /** Set on the one note this file adds: how many signatures were not checked. */
  notChecked?: number;
}
interface DkimVerifierInstance {
  headers: ParsedHeaders;
  results: SignatureResult[];
  uncheckedCount?: number;
}
interface DkimVerifierPrototype {
  messageHeaders(this: DkimVerifierInstance, headers: ParsedHeaders): Promise<void>;
  finalChunk(this: DkimVerifierInstance): Promise<void>;
  limited?: boolean;
}

const require = createRequire(import.meta.url);

/** The note's count when `result` is the "not checked" entry this file adds, else 0. */
export function uncheckedSignatures(result: object): number {
  return (result as SignatureResult).notChecked ?? 0;
}

/**
 * Makes mailauth's DKIM verifier (in this thread) check at most `max`
 * signatures and treat an `l=` beyond the body as not verified.
 *
 * - Only the first `max` DKIM-Signature fields from the top of the header
 *   block are checked (the newest, as each hop adds its own on top). The
 *   others are left out before mailauth parses them or builds a body hasher
 *   for them; the Authentication-Results header gets one `dkim=neutral` entry
 *   saying how many were not checked, which the `dkim` verdict ignores. The
 *   header block itself is untouched, so a checked signature that covers
 *   `DKIM-Signature` fields (`h=`) still hashes all of them.
 * - A signature whose `l=` is larger than the canonicalized body signs bytes
 *   that are not there (OpenDKIM: "l= value exceeds body size"); mailauth 4.13
 *   only prints a debug line and lets it pass. Such a pass is `neutral` here,
 *   with the comment `l= exceeds the body length`, as for a body changed
 *   after signing.
 *
 * @example limitDkimVerification(); // then mailauth.authenticate(...) as usual
 */
export function limitDkimVerification(max = MAX_DKIM_SIGNATURES): void {
  const { DkimVerifier } = require('mailauth/lib/dkim/dkim-verifier.js') as { DkimVerifier: { prototype: DkimVerifierPrototype } };
  const { formatAuthHeaderRow } = require('mailauth/lib/tools.js') as { formatAuthHeaderRow: (method: string, status: object) => string };
  const proto = DkimVerifier.prototype;
  if (proto.limited) return;
  const { messageHeaders, finalChunk } = proto;

  proto.messageHeaders = async function (headers) {
    let seen = 0;
    const checked = headers.parsed.filter((h) => h.key !== 'dkim-signature' || ++seen <= max);
    this.uncheckedCount = seen - Math.min(seen, max);
    // mailauth picks its signatures from `headers.parsed`; hand it the shortened list...
    await messageHeaders.call(this, { ...headers, parsed: checked });
    // ...and keep the whole block for hashing the signed header fields.
    this.headers = headers;
  };

  proto.finalChunk = async function () {
    await finalChunk.call(this);
    for (const result of this.results) {
      const limit = result.canonBodyLengthLimit;
      if (result.status.result === 'pass' && result.canonBodyLengthLimited && typeof limit === 'number' && typeof result.canonBodyLength === 'number' && limit > result.canonBodyLength) {
        result.status.result = 'neutral';
        result.status.comment = 'l= exceeds the body length';
        result.info = formatAuthHeaderRow('dkim', result.status);
      }
    }
    if (this.uncheckedCount) {
      const status = { result: 'neutral', comment: `${this.uncheckedCount} more DKIM-Signature fields not checked: only the first ${max} are` };
      this.results.push({ status, notChecked: this.uncheckedCount, info: formatAuthHeaderRow('dkim', status) });
    }
  };
  proto.limited = true;
}
