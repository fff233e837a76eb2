// Bodies of the console's sign-in, session and two-factor routes (`/app/api`, docs/console.md).
import { z } from '@hono/zod-openapi';
import { Timestamp, Uuid } from './common.js';

const TotpCode = z.string().regex(/^\d{6}$/, 'must be the 6 digits the authenticator app shows').openapi({ example: '123456' });
const RecoveryCode = z.string().min(1).max(64).openapi({ example: 'k7q2m-x9d4p', description: 'One of the ten recovery codes given when two-factor authentication was turned on; each works once.' });

export const SignInBody = z.object({
  email: z.string().min(1).max(320).openapi({ example: 'ada@example.com' }),
  password: z.string().min(1).max(1024).openapi({ example: 'correct horse battery staple' }),
  totp_code: TotpCode.optional().openapi({ description: 'Required when the account has two-factor authentication on (else answered 401 with `two_factor_required: true`), unless `recovery_code` is given.' }),
  recovery_code: RecoveryCode.optional(),
}).refine((b) => !(b.totp_code && b.recovery_code), { message: 'give totp_code or recovery_code, not both', path: ['recovery_code'] })
  .openapi('SignIn');

export const ConsoleUserSchema = z.object({
  id: Uuid,
  email: z.string(),
  name: z.string(),
  email_verified: z.boolean(),
  two_factor_enabled: z.boolean(),
  default_project_id: Uuid.nullable(),
  platform_admin: z.boolean().openapi({ description: 'The user is a platform admin: this session may use `/api/v1/admin` (docs/console.md "Platform admins in the console").' }),
}).openapi('ConsoleUser');

export const SessionSchema = z.object({
  id: Uuid,
  method: z.enum(['password', 'passkey', 'oidc']),
  created_at: Timestamp,
  expires_at: Timestamp.openapi({ description: 'Absolute expiry (`console.session_max_age` after sign-in).' }),
  idle_expires_at: Timestamp.openapi({ description: 'Idle expiry: the last request (recorded at most once a minute) plus `console.session_idle_timeout`.' }),
  current_project_id: Uuid.nullable().openapi({ description: 'The project the console works in: the one chosen with `PUT /app/api/session/project`, else the default project; null when the user has none.' }),
}).openapi('ConsoleSession');

export const MembershipSchema = z.object({
  project_id: Uuid,
  project_name: z.string(),
  role: z.enum(['owner', 'admin', 'member']),
  group_id: Uuid.nullable(),
  sso_required: z.boolean().openapi({ description: 'The project requires single sign-on: only a session opened through one of the identity providers its policy names (`GET /api/v1/project/sso`: `provider_ids`) may act in it (docs/console.md "SSO policy").' }),
}).openapi('ConsoleMembership');

export const SignedInSchema = z.object({ user: ConsoleUserSchema, session: SessionSchema }).openapi('SignedIn');
export const WhoAmISchema = z.object({ user: ConsoleUserSchema, session: SessionSchema, memberships: z.array(MembershipSchema) }).openapi('WhoAmI');

export const SwitchProjectBody = z.object({ project_id: Uuid }).openapi('SwitchProject');

export const TotpStartedSchema = z.object({
  secret: z.string().openapi({ description: 'The base32 secret, for typing into an app by hand.', example: 'JBSWY3DPEHPK3PXP' }),
  otpauth_uri: z.string().openapi({ description: 'The `otpauth://totp/...` URI an authenticator app reads from a QR code.', example: 'otpauth://totp/edgemail:ada%40example.com?issuer=edgemail&secret=JBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30' }),
}).openapi('TotpStarted');

export const TotpConfirmBody = z.object({ code: TotpCode }).openapi('TotpConfirm');

export const RecoveryCodesSchema = z.object({
  recovery_codes: z.array(z.string()).openapi({ description: 'Ten single-use codes, shown this once (only their hashes are stored).' }),
}).openapi('RecoveryCodes');

export const TotpDisableBody = z.object({
  password: z.string().min(1).max(1024).optional(),
  code: TotpCode.optional(),
}).refine((b) => Boolean(b.password) !== Boolean(b.code), { message: 'give the account password or a current code (one of them)', path: ['password'] })
  .openapi('TotpDisable');
