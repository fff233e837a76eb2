// A software WebAuthn authenticator for tests (W3C WebAuthn Level 2, sections
// 6.1 and 6.5): P-256 keys made with WebCrypto, real clientDataJSON, real
// authenticatorData (rpIdHash, flags, signature counter, attested credential
// data with a COSE key), `none` attestation, and ES256 assertions signed over
// authenticatorData || SHA-256(clientDataJSON). Built on its own (its CBOR
// and DER too), so the service's verifier is checked against an independent
// implementation, not against itself. Every field a test wants wrong
// (challenge, origin, rpId, counter, flags) can be overridden per ceremony.

const subtle = globalThis.crypto.subtle;

export const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = async (bytes: Uint8Array) => new Uint8Array(await subtle.digest('SHA-256', new Uint8Array(bytes)));
const utf8 = (text: string) => new TextEncoder().encode(text);
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};

// --- CBOR (RFC 8949), the subset WebAuthn uses: integers, byte and text strings, maps.
type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>;

function cborHead(major: number, length: number): Uint8Array {
  if (length < 24) return new Uint8Array([(major << 5) | length]);
  if (length < 0x100) return new Uint8Array([(major << 5) | 24, length]);
  if (length < 0x10000) return new Uint8Array([(major << 5) | 25, length >> 8, length & 0xff]);
  return new Uint8Array([(major << 5) | 26, (length >>> 24) & 0xff, (length >> 16) & 0xff, (length >> 8) & 0xff, length & 0xff]);
}

export function cbor(value: Cbor): Uint8Array {
  if (typeof value === 'number') return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value);
  if (typeof value === 'string') { const b = utf8(value); return concat(cborHead(3, b.length), b); }
  if (value instanceof Uint8Array) return concat(cborHead(2, value.length), value);
  return concat(cborHead(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)]));
}

// --- ES256 signature: WebCrypto gives r || s; WebAuthn wants ASN.1 DER (RFC 3279).
function derInteger(raw: Uint8Array): Uint8Array {
  let i = 0;
  while (i < raw.length - 1 && raw[i] === 0) i++;
  const v = raw[i]! & 0x80 ? concat(new Uint8Array([0]), raw.slice(i)) : raw.slice(i);
  return concat(new Uint8Array([0x02, v.length]), v);
}
function derSignature(raw: Uint8Array): Uint8Array {
  const body = concat(derInteger(raw.slice(0, 32)), derInteger(raw.slice(32)));
  return concat(new Uint8Array([0x30, body.length]), body);
}

/** authenticatorData flags (WebAuthn 6.1). */
export const FLAGS = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 } as const;

const counterBytes = (n: number) => new Uint8Array([(n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);

interface Credential { id: Uint8Array; keys: CryptoKeyPair; counter: number; userHandle: string; rpId: string }

/** What a test may make wrong in one ceremony. */
export interface Overrides {
  challenge?: string;
  origin?: string;
  rpId?: string;
  /** The signature counter to report (default: one more than the last). */
  counter?: number;
  /** authenticatorData flags (default UP | UV, plus AT on registration). */
  flags?: number;
}

interface CreationOptions { challenge: string; rp: { id?: string }; user: { id: string }; excludeCredentials?: { id: string }[] }
interface RequestOptions { challenge: string; rpId?: string }

export class SoftwareAuthenticator {
  private readonly credentials: Credential[] = [];

  /** `origin`: the page the browser is on (the service's `server.public_url` origin, for a right ceremony). */
  constructor(private readonly origin: string) {}

  /** navigator.credentials.create(): a new P-256 credential, answered as RegistrationResponseJSON. */
  async register(options: CreationOptions, o: Overrides = {}) {
    const rpId = o.rpId ?? options.rp.id!;
    const keys = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']) as CryptoKeyPair;
    const id = crypto.getRandomValues(new Uint8Array(16));
    const counter = o.counter ?? 0;
    const credential: Credential = { id, keys, counter, userHandle: options.user.id, rpId };
    const raw = new Uint8Array(await subtle.exportKey('raw', keys.publicKey)); // 0x04 || x || y
    const coseKey = cbor(new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, raw.slice(1, 33)], [-3, raw.slice(33, 65)]]));
    const attestedCredentialData = concat(new Uint8Array(16) /* AAGUID: none */, new Uint8Array([0, id.length]), id, coseKey);
    const authData = concat(await sha256(utf8(rpId)), new Uint8Array([o.flags ?? (FLAGS.UP | FLAGS.UV | FLAGS.AT)]), counterBytes(counter), attestedCredentialData);
    const clientDataJSON = this.clientData('webauthn.create', o.challenge ?? options.challenge, o);
    const attestationObject = cbor(new Map<Cbor, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    this.credentials.push(credential);
    return {
      id: b64url(id), rawId: b64url(id), type: 'public-key' as const,
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
      clientExtensionResults: {}, authenticatorAttachment: 'platform' as const,
    };
  }

  /**
   * navigator.credentials.get(): an assertion by the credential `credentialId`
   * (default: the last registered), answered as AuthenticationResponseJSON.
   */
  async assert(options: RequestOptions, o: Overrides & { credentialId?: string } = {}) {
    const credential = o.credentialId ? this.credentials.find((c) => b64url(c.id) === o.credentialId) : this.credentials.at(-1);
    if (!credential) throw new Error('no such credential in this authenticator');
    credential.counter = o.counter ?? credential.counter + 1;
    const rpId = o.rpId ?? options.rpId ?? credential.rpId;
    const authData = concat(await sha256(utf8(rpId)), new Uint8Array([o.flags ?? (FLAGS.UP | FLAGS.UV)]), counterBytes(credential.counter));
    const clientDataJSON = this.clientData('webauthn.get', o.challenge ?? options.challenge, o);
    const signed = concat(authData, await sha256(clientDataJSON));
    const raw = new Uint8Array(await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, credential.keys.privateKey, signed));
    return {
      id: b64url(credential.id), rawId: b64url(credential.id), type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authData),
        signature: b64url(derSignature(raw)), userHandle: credential.userHandle,
      },
      clientExtensionResults: {}, authenticatorAttachment: 'platform' as const,
    };
  }

  /** The id of the last credential registered. */
  get lastCredentialId(): string {
    const last = this.credentials.at(-1);
    if (!last) throw new Error('nothing registered');
    return b64url(last.id);
  }

  private clientData(type: string, challenge: string, o: Overrides): Uint8Array {
    return utf8(JSON.stringify({ type, challenge, origin: o.origin ?? this.origin, crossOrigin: false }));
  }
}

/** A random challenge no server issued. */
export const strayChallenge = () => b64url(crypto.getRandomValues(new Uint8Array(32)));

