// Self-signed certificate pairs made with node:crypto alone (no openssl on the
// machine is assumed): a P-256 key and a small DER encoder for the certificate.
import { createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';

/** A DER element: tag, length, contents (lengths up to 64 KiB). */
export function der(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const n = body.length;
  const length = n < 0x80 ? Buffer.from([n])
    : n < 0x100 ? Buffer.from([0x81, n])
    : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

export const seq = (...c: Buffer[]) => der(0x30, ...c);
const set = (...c: Buffer[]) => der(0x31, ...c);

export function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [a! * 40 + b!];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >>> 7; v > 0; v >>>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

/** UTCTime until 2049, GeneralizedTime after, as RFC 5280 asks. */
export function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  return d.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(iso.slice(2))) : der(0x18, Buffer.from(iso));
}

export const name = (cn: string) => seq(set(seq(oid('2.5.4.3'), der(0x0c, Buffer.from(cn)))));

/**
 * 16 random bytes as a positive, minimally encoded DER INTEGER: a first byte
 * of 0x00 would make Go's crypto/x509 (Pebble) refuse the certificate as a
 * malformed serial number, once in 256 certificates.
 */
export function certificateSerial(): Buffer {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  return serial;
}

export interface CertificatePair { certificate: string; privateKey: string; notBefore: Date; notAfter: Date }

/**
 * @example const { certificate, privateKey } = selfSignedPair({ hosts: ['mx.test', 'localhost'], days: 90 });
 */
export function selfSignedPair(opts: { hosts: string[]; days?: number; notBefore?: Date }): CertificatePair {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const notBefore = new Date(Math.floor((opts.notBefore ?? new Date(Date.now() - 60_000)).getTime() / 1000) * 1000);
  const notAfter = new Date(notBefore.getTime() + (opts.days ?? 90) * 86_400_000);
  const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const serial = certificateSerial();
  const san = seq(...opts.hosts.map((h) => der(0x82, Buffer.from(h))));
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    ecdsaWithSha256,
    name(opts.hosts[0]!),
    seq(time(notBefore), time(notAfter)),
    name(opts.hosts[0]!),
    publicKey.export({ type: 'spki', format: 'der' }),
    der(0xa3, seq(seq(oid('2.5.29.17'), der(0x04, san)))),
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const cert = seq(tbs, ecdsaWithSha256, der(0x03, Buffer.from([0]), signature));
  const body = cert.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n');
  return {
    certificate: `-----BEGIN CERTIFICATE-----\n${body}-----END CERTIFICATE-----\n`,
    privateKey: createPrivateKey(privateKey.export({ type: 'pkcs8', format: 'pem' })).export({ type: 'pkcs8', format: 'pem' }) as string,
    notBefore,
    notAfter,
  };
}
