import { z } from '@hono/zod-openapi';
import { AllowedIps, FutureTimestamp, Timestamp, Uuid } from './common.js';

const limit = z.number().int('must be an integer').min(0, 'must be 0 (unlimited) or more');

export const CreatePlanSchema = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100),
  hourly_email_limit: limit.default(0),
  daily_email_limit: limit.default(0),
}).strict().openapi('CreatePlan');

export const PlanSchema = z.object({
  id: z.uuid(), name: z.string(), hourly_email_limit: z.number().int(), daily_email_limit: z.number().int(), created_at: Timestamp,
}).openapi('Plan');

export const CreateUserSchema = z.object({
  email: z.email('must be an email address').max(320),
  name: z.string().trim().max(200).default(''),
}).strict().openapi('CreateUser');

export const UserSchema = z.object({
  id: z.uuid(), email: z.string(), name: z.string(), default_project_id: z.uuid().nullable(),
  platform_admin: z.boolean().openapi({ description: 'A console session of this user may use `/api/v1/admin` (`PUT`/`DELETE /api/v1/admin/users/{id}/platform-admin`, `edgemail admin grant-platform-admin`).' }),
  created_at: Timestamp,
}).openapi('User');

export const CreateProjectSchema = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100),
  plan_id: Uuid.optional(),
  owner_id: Uuid.optional(),
}).strict().openapi('CreateProject');

export const ProjectSchema = z.object({
  id: z.uuid(), name: z.string(), plan_id: z.uuid().nullable(), created_at: Timestamp,
}).openapi('Project');

export const CreateCredentialSchema = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100),
  allowed_ips: AllowedIps.default([]),
  expires_at: FutureTimestamp.optional(),
}).strict().openapi('CreatePlatformCredential');

export const CredentialSchema = z.object({
  id: z.uuid(), name: z.string(), key_prefix: z.string().openapi({ example: 'mya_a1b2c3d4' }),
  allowed_ips: z.array(z.string()), revoked: z.boolean(), expires_at: Timestamp.nullable(),
  last_used_at: Timestamp.nullable(), created_at: Timestamp,
}).openapi('PlatformCredential');


export const SetUserPasswordSchema = z.object({
  password: z.string().openapi({ description: 'The new password; the console\'s password rule (docs/console.md "The password rule"): 10 to 128 characters, not only spaces, not the account\'s address or its local part', example: 'correct horse battery staple' }),
}).strict().openapi('SetUserPassword');

export const SetUserPasswordResultSchema = z.object({
  user: UserSchema,
  replaced: z.boolean().openapi({ description: 'True when the account had a password before: it is replaced and every session of the account is signed out. False for a first password: sessions (passkey, single sign-on) stay.' }),
}).openapi('SetUserPasswordResult');

export const PlatformAdminResultSchema = z.object({
  user: UserSchema,
  changed: z.boolean().openapi({ description: 'False when the user already was (or was not) a platform admin: nothing changed and nothing was written to their trail.' }),
}).openapi('PlatformAdminResult');

export const AdminProjectPageSchema = z.object({
  projects: z.array(ProjectSchema),
  total: z.number().int().openapi({ description: 'Projects matching `q` (all of them without it)' }),
  limit: z.number().int(), offset: z.number().int(),
}).openapi('AdminProjectPage');

export const DeadLettersSchema = z.object({
  relay_node_id: z.uuid(), relay_node_name: z.string(), project_id: z.uuid(), project_name: z.string(),
  count: z.number().int().openapi({ description: 'Messages in the node\'s `<spool>/dead/`, as its last heartbeat reported' }),
  bytes: z.number().int().openapi({ description: 'Their bytes, as its last heartbeat reported' }),
  reported_at: Timestamp.nullable().openapi({ description: 'The last heartbeat (null: the node never beat)' }),
}).openapi('RelayNodeDeadLetters');
