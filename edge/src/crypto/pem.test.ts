import { X509Certificate } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { selfSignedPair } from '../../../test/support/certificate.js';
import { certificatePublicKeyInfo, certificateValidity, DerError, pemBlocks } from './pem.js';

// Made with `openssl req -x509 -newkey ec … -days 36500`: its notAfter (2126) is a GeneralizedTime.
const OPENSSL_CERT = `-----BEGIN CERTIFICATE-----
MIIBqTCCAU+gAwIBAgIUEWsNPTXyNrSJPlDFoJJ5k20bLbswCgYIKoZIzj0EAwIw
FzEVMBMGA1UEAwwMZml4dHVyZS50ZXN0MCAXDTI2MTEyNjAyMDkwNVoYDzIxMjYx
MTAyMDIwOTA1WjAXMRUwEwYDVQQDDAxmaXh0dXJlLnRlc3QwWTATBgcqhkjOPQIB
BggqhkjOPQMBBwNCAAQWo68IBIxMiIbdOaOazLYsdJGj4gpVuCkgl7JeC7jvchc+
Ie67FSEA/B3LU9fbYe7cYgauukrJYLSYcdoVirr+o3cwdTAdBgNVHQ4EFgQUQ3Qx
6DlwvyolEW6lfi6i6jDsDQUwHwYDVR0jBBgwFoAUQ3Qx6DlwvyolEW6lfi6i6jDs
DQUwDwYDVR0TAQH/BAUwAwEB/zAiBgNVHREEGzAZggxmaXh0dXJlLnRlc3SCCWxv
Y2FsaG9zdDAKBggqhkjOPQQDAgNIADBFAiAdFhx62O1JQ5PZmjDBvHoeDSIC+k4b
gcLz43c0BYRFxAIhAIDQtAuYasNupOjz+41fiZd4VvMOsMqH2RB1gadSIjG/
-----END CERTIFICATE-----
`;

describe('certificatePublicKeyInfo', () => {
  test('is the SubjectPublicKeyInfo node:crypto reads', () => {
    const pair = selfSignedPair({ hosts: ['mx.test'], days: 90 });
    for (const pem of [pair.certificate, OPENSSL_CERT]) {
      const expected = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
      expect(Buffer.from(certificatePublicKeyInfo(pemBlocks(pem)[0]!.der))).toEqual(expected);
    }
  });

  test('refuses what is not a certificate', () => {
    expect(() => certificatePublicKeyInfo(Uint8Array.from([0x30, 0x00]))).toThrow(DerError);
  });
});

describe('certificateValidity', () => {
  test('reads UTCTime (the test pair) and GeneralizedTime (openssl, 2126) as node:crypto does', () => {
    const pair = selfSignedPair({ hosts: ['mx.test', 'localhost'], days: 90 });
    for (const pem of [pair.certificate, OPENSSL_CERT]) {
      const x509 = new X509Certificate(pem);
      const { notBefore, notAfter } = certificateValidity(pemBlocks(pem)[0]!.der);
      expect(notAfter.getTime()).toBe(new Date(x509.validTo).getTime());
      expect(notBefore.getTime()).toBe(new Date(x509.validFrom).getTime());
    }
    expect(certificateValidity(pemBlocks(OPENSSL_CERT)[0]!.der).notAfter.toISOString()).toBe('2126-11-02T02:09:05.000Z');
  });

  test.each([
    ['empty', new Uint8Array()],
    ['a lone sequence', Uint8Array.from([0x30, 0x00])],
    ['a truncated certificate', pemBlocks(OPENSSL_CERT)[0]!.der.subarray(0, 40)],
    ['a length past the end', Uint8Array.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff])],
  ])('refuses %s', (_, bytes) => {
    expect(() => certificateValidity(bytes)).toThrow(DerError);
  });
});
