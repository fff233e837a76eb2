// A client's STARTTLS over a real socket: EHLO, STARTTLS, then the TLS
// handshake (with SNI when given). Used by tests that read what a listener
// presents, and by `pnpm bench tls`.
import { connect as connectTcp } from 'node:net';
import { connect as connectTls, type TLSSocket } from 'node:tls';

/** Resolves with the secured socket once the handshake completed; the caller ends it. */
export function startTls(port: number, servername?: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp(port, '127.0.0.1');
    let buffer = '';
    const steps = ['EHLO probe.test\r\n', 'STARTTLS\r\n'];
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      if (!/(^|\n)\d{3} [^\n]*\r\n$/.test(buffer)) return;
      const reply = buffer;
      buffer = '';
      const next = steps.shift();
      if (next) return void socket.write(next);
      socket.removeAllListeners('data');
      if (!reply.startsWith('220 ')) {
        socket.destroy();
        return reject(new Error(`STARTTLS refused: ${reply.trim()}`));
      }
      const secure = connectTls({ socket, rejectUnauthorized: false, ...(servername ? { servername } : {}) }, () => resolve(secure));
      secure.on('error', reject);
    });
  });
}

/** The SHA-256 fingerprint of the certificate the listener presents after STARTTLS. */
export async function presentedFingerprint(port: number, servername?: string): Promise<string> {
  const secure = await startTls(port, servername);
  const fingerprint = secure.getPeerX509Certificate()!.fingerprint256;
  secure.end();
  return fingerprint;
}
