// Just enough PEM and DER reading for the hot paths that need no full X.509 library: split PEM
// blocks, and read the validity and public key from a certificate's DER (the SNS signature check).
// Certificates an operator or a node hands us are read with @peculiar/x509 (x509.ts, inspect.ts).
import { fromBase64 } from '@edgemail/shared';

export interface PemBlock { label: string; der: Uint8Array }

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([A-Za-z0-9+/=\r\n]+?)-----END \1-----/g;

/** Every well-formed PEM block of `text`, in order. */
export function pemBlocks(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  for (const m of text.matchAll(BLOCK)) {
    try {
      blocks.push({ label: m[1]!, der: fromBase64(m[2]!.replace(/\s+/g, '')) });
    } catch { /* not base64: not a block */ }
  }
  return blocks;
}

export class DerError extends Error {}

interface Tlv { tag: number; offset: number; start: number; end: number }

/** The element starting at `offset`: its tag and where its contents start and end. */
function readTlv(der: Uint8Array, offset: number, limit = der.length): Tlv {
  if (offset + 2 > limit) throw new DerError('truncated');
  const tag = der[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('multi-byte tags are not used in certificates');
  let length = der[offset + 1]!;
  let start = offset + 2;
  if (length & 0x80) {
    const n = length & 0x7f;
    if (n === 0 || n > 4 || start + n > limit) throw new DerError('bad length');
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + der[start + i]!;
    start += n;
  }
  const end = start + length;
  if (end > limit) throw new DerError('truncated');
  return { tag, offset, start, end };
}

/** The elements directly inside a constructed element. */
function children(der: Uint8Array, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let offset = parent.start; offset < parent.end;) {
    const child = readTlv(der, offset, parent.end);
    out.push(child);
    offset = child.end;
  }
  return out;
}

const SEQUENCE = 0x30;
const UTC_TIME = 0x17;
const GENERALIZED_TIME = 0x18;
const EXPLICIT_0 = 0xa0;

function readTime(der: Uint8Array, t: Tlv): Date {
  const text = String.fromCharCode(...der.subarray(t.start, t.end));
  let m: RegExpExecArray | null;
  if (t.tag === UTC_TIME && (m = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text))) {
    const yy = Number(m[1]);
    return utc(yy >= 50 ? 1900 + yy : 2000 + yy, m.slice(2));
  }
  if (t.tag === GENERALIZED_TIME && (m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text))) {
    return utc(Number(m[1]), m.slice(2));
  }
  throw new DerError('bad time');
}

function utc(year: number, [month, day, hour, minute, second]: string[]): Date {
  const date = new Date(Date.UTC(year, Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)));
  if (Number.isNaN(date.getTime())) throw new DerError('bad time');
  return date;
}

/**
 * The validity of an X.509 certificate (DER): Certificate → tbsCertificate →
 * [version], serialNumber, signature, issuer, validity {notBefore, notAfter}.
 * Throws DerError when the bytes are not shaped like a certificate.
 */
export function certificateValidity(der: Uint8Array): { notBefore: Date; notAfter: Date } {
  const validity = tbsField(der, 3);
  if (validity.tag !== SEQUENCE) throw new DerError('not a certificate');
  const [notBefore, notAfter] = children(der, validity);
  if (!notBefore || !notAfter) throw new DerError('not a certificate');
  return { notBefore: readTime(der, notBefore), notAfter: readTime(der, notAfter) };
}

/**
 * The SubjectPublicKeyInfo of an X.509 certificate (DER), as WebCrypto's
 * `importKey('spki', …)` takes it (the SNS signature check).
 */
export function certificatePublicKeyInfo(der: Uint8Array): Uint8Array {
  const spki = tbsField(der, 5);
  if (spki.tag !== SEQUENCE) throw new DerError('not a certificate');
  return der.slice(spki.offset, spki.end);
}

/** tbsCertificate's `index`-th field after the optional [0] version: 0 serialNumber … 3 validity, 4 subject, 5 subjectPublicKeyInfo. */
function tbsField(der: Uint8Array, index: number): Tlv {
  const certificate = readTlv(der, 0);
  if (certificate.tag !== SEQUENCE || certificate.end !== der.length) throw new DerError('not a certificate');
  const [tbs] = children(der, certificate);
  if (!tbs || tbs.tag !== SEQUENCE) throw new DerError('not a certificate');
  const fields = children(der, tbs);
  const field = fields[fields[0]?.tag === EXPLICIT_0 ? index + 1 : index];
  if (!field) throw new DerError('not a certificate');
  return field;
}
