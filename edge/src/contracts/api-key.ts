import { z } from '@hono/zod-openapi';
import { permissionListProblem } from '@edgemail/shared';
import { AllowedIps, FutureTimestamp, Timestamp } from './common.js';

export const ApiKeySchema = z
  .object({
    id: z.uuid(),
    project_id: z.uuid(),
    name: z.string(),
    key_prefix: z.string().openapi({ example: 'myk_a1b2c3d4' }),
    permissions: z.array(z.string()),
    allowed_ips: z.array(z.string()),
    revoked: z.boolean(),
    sandbox: z.boolean(),
    expires_at: Timestamp.nullable(),
    last_used_at: Timestamp.nullable().openapi({ description: 'Updated at most once a minute' }),
    created_at: Timestamp,
  })
  .openapi('ApiKey');

export const CreateApiKeySchema = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
    permissions: z
      .array(z.string())
      .max(100)
      .default([])
      .superRefine((list, ctx) => {
        const problem = permissionListProblem(list, { allowWildcard: true });
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .openapi({ example: ['emails:write', 'emails:read'], description: 'Catalogue entries or the single wildcard `*`; empty grants nothing' }),
    allowed_ips: AllowedIps.default([]),
    expires_at: FutureTimestamp.optional(),
    sandbox: z.boolean().default(false),
  })
  .strict()
  .openapi('CreateApiKey');

export type ApiKeyRecord = z.infer<typeof ApiKeySchema>;
export type CreateApiKeyInput = z.infer<typeof CreateApiKeySchema>;
