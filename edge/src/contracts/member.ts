// A project's people: members, custom member groups and invitations
// (docs/console.md, "Members and groups", "Invitations").
import { z } from '@hono/zod-openapi';
import { permissionListProblem, WILDCARD } from '@edgemail/shared';
import { normalizeAddress } from './email-address.js';
import { Timestamp, Uuid } from './common.js';

export const MemberRoleSchema = z.enum(['owner', 'admin', 'member']).openapi({ description: 'The membership role (docs/api.md, "Roles")' });

export const MemberSchema = z
  .object({
    user_id: z.uuid(),
    email: z.string(),
    name: z.string(),
    role: MemberRoleSchema,
    group_id: z.uuid().nullable().openapi({ description: 'A custom group: the member holds its permissions instead of the role\'s (on routes without a role gate)' }),
    email_verified: z.boolean(),
    created_at: Timestamp.openapi({ description: 'When the membership was made' }),
  })
  .openapi('Member');

export const MemberParams = z.object({
  userId: Uuid.openapi({ param: { name: 'userId', in: 'path' }, example: '0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11' }),
});

export const UpdateMemberSchema = z
  .object({
    role: MemberRoleSchema.optional(),
    group_id: Uuid.nullable().optional().openapi({ description: 'A group of this project, or null to leave the member on the role\'s permissions' }),
  })
  .strict()
  .refine((b) => b.role !== undefined || b.group_id !== undefined, { message: 'give role, group_id or both' })
  .openapi('UpdateMember');
export type UpdateMemberInput = z.infer<typeof UpdateMemberSchema>;

/** A group's list: catalogue entries only. `*` and unknown entries are 400 naming the entry, before the table's CHECK is reached. */
const GroupPermissions = z
  .array(z.string())
  .max(100)
  .superRefine((list, ctx) => {
    if (list.includes(WILDCARD)) {
      ctx.addIssue({ code: 'custom', message: 'wildcard * is not allowed in a member group: list the permissions' });
      return;
    }
    const problem = permissionListProblem(list, { allowWildcard: false });
    if (problem) ctx.addIssue({ code: 'custom', message: problem.replace('to an API key', 'to a member group') });
  })
  .transform((list) => [...new Set(list)])
  .openapi({ example: ['emails:read', 'analytics:read'], description: 'Catalogue entries (`GET /api/v1/permissions`); never `*`, never a session-only permission' });

const GroupName = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');

export const MemberGroupSchema = z
  .object({
    id: z.uuid(),
    project_id: z.uuid(),
    name: z.string(),
    permissions: z.array(z.string()),
    members: z.number().int().openapi({ description: 'How many members are in the group' }),
    created_at: Timestamp,
  })
  .openapi('MemberGroup');

export const CreateMemberGroupSchema = z
  .object({ name: GroupName, permissions: GroupPermissions.default([]) })
  .strict()
  .openapi('CreateMemberGroup');
export type CreateMemberGroupInput = z.infer<typeof CreateMemberGroupSchema>;

export const UpdateMemberGroupSchema = z
  .object({ name: GroupName.optional(), permissions: GroupPermissions.optional() })
  .strict()
  .refine((b) => b.name !== undefined || b.permissions !== undefined, { message: 'give name, permissions or both' })
  .openapi('UpdateMemberGroup');
export type UpdateMemberGroupInput = z.infer<typeof UpdateMemberGroupSchema>;

/** One mailbox, kept as its bare lower-case address. */
export const InviteeAddress = z.string().max(320).transform((s, ctx) => {
  const read = normalizeAddress(s);
  if ('problem' in read) {
    ctx.addIssue({ code: 'custom', message: read.problem });
    return z.NEVER;
  }
  return read.address;
}).openapi({ type: 'string', example: 'ada@acme.example' });

export const InvitationSchema = z
  .object({
    id: z.uuid(),
    project_id: z.uuid(),
    email: z.string(),
    role: MemberRoleSchema,
    group_id: z.uuid().nullable(),
    invited_by: z.uuid().nullable().openapi({ description: 'The inviting user; null when a key or a platform credential invited' }),
    expires_at: Timestamp,
    created_at: Timestamp,
  })
  .openapi('Invitation');

export const CreateInvitationSchema = z
  .object({
    email: InviteeAddress,
    role: MemberRoleSchema.default('member'),
    group_id: Uuid.optional().openapi({ description: 'A custom group of this project the new member joins' }),
  })
  .strict()
  .openapi('CreateInvitation');
export type CreateInvitationInput = z.infer<typeof CreateInvitationSchema>;

/** A mailed token: 43 base64url characters (32 random bytes). */
export const MailedToken = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters')
  .openapi({ description: 'The token from the link in the mail', example: 'q3Yl…' });

export const AcceptInvitationSchema = z
  .object({
    token: MailedToken,
    password: z.string().optional().openapi({ description: 'Required when the address has no account yet (the password rule: docs/console.md); refused when it has one' }),
    name: z.string().trim().max(100, 'must be at most 100 characters').optional().openapi({ description: 'The new account\'s display name' }),
  })
  .strict()
  .openapi('AcceptInvitation');
export type AcceptInvitationInput = z.infer<typeof AcceptInvitationSchema>;

export const AcceptedInvitationSchema = z
  .object({
    user_id: z.uuid(),
    project_id: z.uuid(),
    role: MemberRoleSchema,
    account_created: z.boolean().openapi({ description: 'True when accepting made the account' }),
  })
  .openapi('AcceptedInvitation');

export const PasswordResetRequestSchema = z
  .object({ email: InviteeAddress })
  .strict()
  .openapi('PasswordResetRequest');

export const PasswordResetCompleteSchema = z
  .object({ token: MailedToken, password: z.string() })
  .strict()
  .openapi('PasswordResetComplete');
export type PasswordResetCompleteInput = z.infer<typeof PasswordResetCompleteSchema>;
