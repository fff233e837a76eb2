// A throwaway certificate for TLS tests, made with the openssl CLI (Node can
// parse X.509 but not issue it).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CertificatePair {
  key: string;
  cert: string;
}

/**
 * A self-signed P-256 certificate for `hosts` (the first is the subject),
 * valid for a day.
 *
 * @example const { key, cert } = selfSignedCertificate(['mx.test', 'localhost']);
 */
export function selfSignedCertificate(hosts: string[]): CertificatePair {
  const dir = mkdtempSync(join(tmpdir(), 'edgemail-cert-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', `/CN=${hosts[0]}`, '-addext', `subjectAltName=${hosts.map((h) => `DNS:${h}`).join(',')}`,
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
