// The one place edge/src loads @peculiar/x509 (X.509 over WebCrypto, which
// workerd has). Its 2.x resolves algorithms through tsyringe, which needs the
// Reflect metadata polyfill evaluated first: this module imports the two in
// that order and points the library at the runtime's WebCrypto once. Import
// `x509` from here, never '@peculiar/x509' directly.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

// Its `Crypto` is the DOM type; workerd's and Node's WebCrypto implement it.
x509.cryptoProvider.set(crypto as never);

export { x509 };

/** Lower-case hex of `bytes` (fingerprints, key identifiers). */
export function hex(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}
