import { z } from '@hono/zod-openapi';
import { normalizeAddress } from './email-address.js';
import { Timestamp } from './common.js';

export const SuppressionSchema = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  address: z.string().openapi({ example: 'ann@example.org' }),
  reason: z.string().openapi({ example: 'manual' }),
  created_at: Timestamp,
}).openapi('Suppression');

export const CreateSuppressionSchema = z.object({
  address: z.string()
    .max(1000, 'must be at most 1000 characters')
    .transform((input, ctx) => {
      const result = normalizeAddress(input);
      if ('problem' in result) {
        ctx.addIssue({ code: 'custom', message: result.problem });
        return z.NEVER;
      }
      return result.address;
    })
    .openapi({ type: 'string', example: 'Ann@Example.org', description: 'An address, bare or as `Name <address>`; stored bare and lower case' }),
  reason: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters').default('manual')
    .openapi({ description: 'Free text; `manual` when omitted' }),
}).strict().openapi('CreateSuppression');

export type SuppressionRecord = z.infer<typeof SuppressionSchema>;
export type CreateSuppressionInput = z.infer<typeof CreateSuppressionSchema>;
