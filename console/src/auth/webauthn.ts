// WebAuthn between the API's JSON (base64url strings, as @simplewebauthn/server
// sends and reads them) and the browser's ArrayBuffers. Also used by the
// account pages to register a passkey (registration options → create()).
import type { AppSchemas } from '../api/client';

const fromB64url = (s: string): ArrayBuffer => {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(s.length / 4) * 4, '=');
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out.buffer;
};
const toB64url = (buf: ArrayBuffer): string => {
  let bin = '';
  for (const byte of new Uint8Array(buf)) bin += String.fromCharCode(byte);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

type Descriptor = { id: string; type: string; transports?: string[] };
const descriptor = (d: Descriptor): PublicKeyCredentialDescriptor => ({ ...d, id: fromB64url(d.id), type: 'public-key', transports: d.transports as AuthenticatorTransport[] | undefined });

/** Whether this browser can use passkeys at all. */
export const passkeysSupported = () => typeof window !== 'undefined' && 'PublicKeyCredential' in window && !!navigator.credentials;

/** navigator.credentials.get() with the sign-in options as the API sends them; the answer as the API reads it. */
export async function getAssertion(options: Record<string, any>): Promise<AppSchemas['PasskeyAuthenticationResponse']> {
  const publicKey: PublicKeyCredentialRequestOptions = {
    ...options,
    challenge: fromB64url(options.challenge),
    allowCredentials: (options.allowCredentials as Descriptor[] | undefined)?.map(descriptor),
  };
  const credential = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential | null;
  if (!credential) throw new Error('no passkey was chosen');
  const r = credential.response as AuthenticatorAssertionResponse;
  return {
    id: credential.id,
    rawId: toB64url(credential.rawId),
    type: 'public-key',
    clientExtensionResults: credential.getClientExtensionResults() as Record<string, unknown>,
    ...(credential.authenticatorAttachment ? { authenticatorAttachment: credential.authenticatorAttachment as 'platform' | 'cross-platform' } : {}),
    response: {
      clientDataJSON: toB64url(r.clientDataJSON),
      authenticatorData: toB64url(r.authenticatorData),
      signature: toB64url(r.signature),
      ...(r.userHandle ? { userHandle: toB64url(r.userHandle) } : {}),
    },
  };
}

/** navigator.credentials.create() with registration options as the API sends them; the answer as JSON. */
export async function createCredential(options: Record<string, any>): Promise<Record<string, unknown>> {
  const publicKey: PublicKeyCredentialCreationOptions = {
    ...options,
    challenge: fromB64url(options.challenge),
    user: { ...options.user, id: fromB64url(options.user.id) },
    excludeCredentials: (options.excludeCredentials as Descriptor[] | undefined)?.map(descriptor),
  } as PublicKeyCredentialCreationOptions;
  const credential = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential | null;
  if (!credential) throw new Error('no passkey was made');
  const r = credential.response as AuthenticatorAttestationResponse;
  return {
    id: credential.id,
    rawId: toB64url(credential.rawId),
    type: 'public-key',
    clientExtensionResults: credential.getClientExtensionResults(),
    ...(credential.authenticatorAttachment ? { authenticatorAttachment: credential.authenticatorAttachment } : {}),
    response: {
      clientDataJSON: toB64url(r.clientDataJSON),
      attestationObject: toB64url(r.attestationObject),
      transports: typeof r.getTransports === 'function' ? r.getTransports() : [],
    },
  };
}

/** What to say when the browser's ceremony failed (cancelled, timed out, no authenticator). */
export function ceremonyMessage(e: unknown): string | undefined {
  if (e instanceof DOMException && (e.name === 'NotAllowedError' || e.name === 'AbortError')) return 'The passkey request was cancelled or timed out.';
  if (e instanceof DOMException) return `The browser refused the passkey request: ${e.message}`;
  return undefined;
}
