// Bodies of the console's passkey routes (`/app/api`, docs/console.md "Passkeys"):
// the WebAuthn JSON the browser's `PublicKeyCredential.toJSON()` (or
// @simplewebauthn/browser) gives, and the stored passkey as listed.
import { z } from '@hono/zod-openapi';
import { Timestamp, Uuid } from './common.js';

const B64Url = (max: number) => z.string().min(1).max(max).regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');

export const PasskeyName = z.string().trim().min(1, 'must be 1 to 100 characters').max(100, 'must be 1 to 100 characters')
  .openapi({ example: 'Ada\'s laptop' });

export const PasskeySchema = z.object({
  id: Uuid,
  name: z.string(),
  created_at: Timestamp,
  last_used_at: Timestamp.nullable().openapi({ description: 'The last sign-in with it; null: never used.' }),
  backed_up: z.boolean().openapi({ description: 'The authenticator said the credential is synced or backed up (a multi-device passkey).' }),
}).openapi('Passkey');

export const PasskeyEnvelopeSchema = z.object({ passkey: PasskeySchema }).openapi('PasskeyEnvelope');

export const PasskeyListSchema = z.object({ passkeys: z.array(PasskeySchema) }).openapi('PasskeyList');

const credentialFields = {
  id: B64Url(1366).openapi({ description: 'The credential id, base64url.' }),
  rawId: B64Url(1366),
  type: z.literal('public-key'),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
};

export const RegistrationResponseSchema = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: B64Url(16_384),
    attestationObject: B64Url(65_536),
    transports: z.array(z.string().max(32)).max(10).optional(),
  }),
}).openapi('PasskeyRegistrationResponse', { description: 'The answer of `navigator.credentials.create()` as JSON (`PublicKeyCredential.toJSON()`).' });

export const AddPasskeyBody = z.object({
  name: PasskeyName,
  response: RegistrationResponseSchema,
}).openapi('AddPasskey');

export const RenamePasskeyBody = z.object({ name: PasskeyName }).openapi('RenamePasskey');

export const AuthenticationResponseSchema = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: B64Url(16_384),
    authenticatorData: B64Url(16_384),
    signature: B64Url(16_384),
    userHandle: B64Url(128).optional(),
  }),
}).openapi('PasskeyAuthenticationResponse', { description: 'The answer of `navigator.credentials.get()` as JSON (`PublicKeyCredential.toJSON()`).' });

export const PasskeySignInBody = z.object({ response: AuthenticationResponseSchema }).openapi('PasskeySignIn');

// The options are WebAuthn's own JSON, passed to `navigator.credentials.create()` / `.get()` as they are
// (`PublicKeyCredential.parseCreationOptionsFromJSON()`, or @simplewebauthn/browser).
export const RegistrationOptionsSchema = z.record(z.string(), z.unknown()).openapi('PasskeyRegistrationOptions', {
  description: 'PublicKeyCredentialCreationOptionsJSON (WebAuthn Level 3): `challenge` (valid 5 minutes, once), `rp` (`id`: the host of `server.public_url`), `user`, `pubKeyCredParams` (ES256, EdDSA, RS256), `excludeCredentials` (the passkeys the user has), `authenticatorSelection` (`residentKey: required`, `userVerification: required`), `attestation: none`, `timeout`.',
  example: { challenge: 'q2X8…', rp: { name: 'edgemail', id: 'mail.example.com' }, user: { id: 'MGI5Yjdj…', name: 'ada@example.com', displayName: 'Ada' }, pubKeyCredParams: [{ alg: -7, type: 'public-key' }], timeout: 300000, attestation: 'none', excludeCredentials: [], authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' } },
});

export const AuthenticationOptionsSchema = z.record(z.string(), z.unknown()).openapi('PasskeyAuthenticationOptions', {
  description: 'PublicKeyCredentialRequestOptionsJSON (WebAuthn Level 3): `challenge` (valid 5 minutes, once), `rpId`, `userVerification: required`, `timeout`, and no `allowCredentials`: the browser offers the passkeys it holds for this site (discoverable credentials).',
  example: { challenge: 'b8Zr…', rpId: 'mail.example.com', timeout: 300000, userVerification: 'required' },
});
