// Bare CR and bare LF in message data, Postfix-style
// (smtpd_forbid_bare_newline = normalize | reject). smtp-server ends DATA
// only on <CRLF>.<CRLF> but hands bare sequences such as <LF>.<CRLF> to
// onData raw; relayed as they are, a looser server downstream could read them
// as the end of DATA and run the rest as commands (SMTP smuggling).
import { Transform, type TransformCallback } from 'node:stream';
import { BareLineEndingError } from './hygiene-errors.js';

const CR = 0x0d;
const LF = 0x0a;
const CRLF = Buffer.from('\r\n', 'latin1');
const LF_ONLY = Buffer.from('\n', 'latin1');

export type BareLineEndingMode = 'normalize' | 'reject';

/**
 * A Transform that turns every bare LF and bare CR into CRLF (`normalize`),
 * or refuses them (`reject`). Streaming-safe: a CR ending one chunk and an LF
 * starting the next are one CRLF. Chunks that need no change (nearly all of
 * them) pass through without a copy.
 *
 * In `reject` mode the first bare ending stops all output, but the input is
 * still read to its end; the stream then fails with a BareLineEndingError.
 * Failing at once would leave the client mid-DATA with nobody reading, and
 * SMTP can only answer after the dot anyway.
 */
export class LineEndingNormalizer extends Transform {
  /** How many bare endings were rewritten (normalize mode), for the log. */
  normalized = 0;
  private pendingCR = false;
  private offset = 0;
  private violation: BareLineEndingError | null = null;

  constructor(readonly mode: BareLineEndingMode = 'normalize') {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.violation || chunk.length === 0) {
      this.offset += chunk.length;
      return callback();
    }
    const out = this.rewrite(chunk);
    this.offset += chunk.length;
    if (out && out.length) this.push(out);
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.pendingCR && !this.violation) {
      this.pendingCR = false;
      if (this.bare('CR', this.offset - 1)) this.push(LF_ONLY);
    }
    callback(this.violation ?? undefined);
  }

  /** The chunk with bare endings replaced; null once a violation is found. */
  private rewrite(chunk: Buffer): Buffer | null {
    const parts: Buffer[] = [];
    let start = 0;
    let from = 0;
    if (this.pendingCR) {
      // The previous chunk ended in a CR, already passed on: an LF here
      // completes it; anything else makes it bare and owed an LF.
      this.pendingCR = false;
      if (chunk[0] === LF) from = 1;
      else if (!this.bare('CR', this.offset - 1)) return null;
      else parts.push(LF_ONLY);
    }
    let cr = chunk.indexOf(CR, from);
    let lf = chunk.indexOf(LF, from);
    while (cr !== -1 || lf !== -1) {
      if (lf !== -1 && (cr === -1 || lf < cr)) {
        // An LF with no CR before it (a CR before it would have been seen first).
        if (!this.bare('LF', this.offset + lf)) return null;
        parts.push(chunk.subarray(start, lf), CRLF);
        start = lf + 1;
        lf = chunk.indexOf(LF, start);
      } else if (cr === chunk.length - 1) {
        // Cannot tell yet: pass the CR on and judge it by the next chunk.
        this.pendingCR = true;
        break;
      } else if (chunk[cr + 1] === LF) {
        cr = chunk.indexOf(CR, cr + 2);
        lf = chunk.indexOf(LF, lf + 1);
      } else {
        if (!this.bare('CR', this.offset + cr)) return null;
        parts.push(chunk.subarray(start, cr), CRLF);
        start = cr + 1;
        cr = chunk.indexOf(CR, start);
      }
    }
    if (start === 0 && parts.length === 0) return chunk;
    if (start < chunk.length) parts.push(chunk.subarray(start));
    return Buffer.concat(parts);
  }

  /** Records a bare ending; false when it means refusing the message. */
  private bare(kind: 'CR' | 'LF', offset: number): boolean {
    if (this.mode === 'reject') {
      this.violation ??= new BareLineEndingError(kind, offset);
      return false;
    }
    this.normalized += 1;
    return true;
  }
}

/**
 * @example
 * await pipeline(smtpDataStream, createLineEndingNormalizer('normalize'), createSizeLimit(max), sink);
 */
export function createLineEndingNormalizer(mode: BareLineEndingMode = 'normalize'): LineEndingNormalizer {
  return new LineEndingNormalizer(mode);
}
