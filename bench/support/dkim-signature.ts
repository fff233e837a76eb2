// One DKIM signature (RFC 6376, rsa-sha256, relaxed/relaxed) for the bench's
// messages, made once per load: it signs only header fields every message
// shares (From, To, Date, MIME-Version, Content-Type) and the shared body, so
// the one DKIM-Signature field is valid for every message of the run while
// Subject and Message-ID still differ. The verifier does the full work per
// message (body hash, header hash, an RSA verification, a key lookup), which
// is what `pnpm bench inbound` measures.
import { createHash, createSign, generateKeyPairSync } from 'node:crypto';

export interface BenchDkimKey {
  domain: string;
  selector: string;
  /** PKCS#8 PEM. */
  privateKey: string;
  /** The TXT record to publish at `<selector>._domainkey.<domain>`. */
  record: string;
}

/** A fresh 2048-bit RSA key and its DNS record. */
export function benchDkimKey(domain: string, selector = 'bench'): BenchDkimKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  return { domain, selector, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), record: `v=DKIM1; k=rsa; p=${spki}` };
}

const SIGNED = ['from', 'to', 'date', 'mime-version', 'content-type'];

/**
 * The `DKIM-Signature: …\r\n` field for a message with header block `header`
 * (CRLF lines, ending with the blank line) and `body` (as sent, before the
 * terminator's CRLF, which is the body's last line ending).
 */
export function dkimSignature(key: Pick<BenchDkimKey, 'domain' | 'selector' | 'privateKey'>, header: string, body: Buffer): string {
  const fields = new Map<string, string>();
  for (const line of header.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1));
  }
  const relaxedBody = `${body.toString('latin1').split('\r\n').map((l) => l.replace(/[ \t]+/g, ' ').replace(/ $/, '')).join('\r\n').replace(/(\r\n)*$/, '')}\r\n`;
  const bh = createHash('sha256').update(relaxedBody, 'latin1').digest('base64');
  const names = SIGNED.filter((n) => fields.has(n));
  const relaxed = (name: string, value: string) => `${name}:${value.replace(/\r\n/g, '').replace(/[ \t]+/g, ' ').trim()}`;
  const unsigned = `v=1; a=rsa-sha256; c=relaxed/relaxed; d=${key.domain}; s=${key.selector}; t=${Math.floor(Date.now() / 1000)}; h=${names.join(':')}; bh=${bh}; b=`;
  const signing = names.map((n) => `${relaxed(n, fields.get(n)!)}\r\n`).join('') + relaxed('dkim-signature', unsigned);
  const b = createSign('RSA-SHA256').update(signing, 'latin1').sign(key.privateKey, 'base64');
  return `DKIM-Signature: ${unsigned}${b}\r\n`;
}
