import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { certificateNames, generateSelfSigned } from './self-signed.js';

describe('the self-signed listener pair', () => {
  it('covers the public host, a wildcard under it and localhost', async () => {
    const names = certificateNames('https://Mail.Example.com/app');
    expect(names).toEqual(['mail.example.com', '*.mail.example.com', 'localhost']);
    const pair = await generateSelfSigned(names);
    const cert = new X509Certificate(pair.certificate);
    expect(cert.subjectAltName).toBe('DNS:mail.example.com, DNS:*.mail.example.com, DNS:localhost');
    expect(cert.checkHost('mx1.mail.example.com')).toBe('*.mail.example.com');
    expect(cert.checkPrivateKey(createPrivateKey(pair.private_key))).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(new Date(cert.validTo).getTime()).toBeGreaterThan(Date.now() + 365 * 86_400_000);
    expect(new Date(cert.validTo).getTime()).toBeLessThan(Date.now() + 398 * 86_400_000); // the edge's ceiling
    expect(Math.abs(Date.parse(pair.not_after) - Date.parse(cert.validTo))).toBeLessThan(1000);
    expect(() => createSecureContext({ key: pair.private_key, cert: pair.certificate })).not.toThrow();
  });

  it('names an IP host as an IP address, without a wildcard', async () => {
    expect(certificateNames('http://127.0.0.1:8787')).toEqual(['127.0.0.1', 'localhost']);
    expect(certificateNames('http://[::1]:8787')).toEqual(['::1', 'localhost']);
    const cert = new X509Certificate((await generateSelfSigned(certificateNames('http://127.0.0.1:8787'))).certificate);
    expect(cert.subjectAltName).toBe('IP Address:127.0.0.1, DNS:localhost');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
  });
});
