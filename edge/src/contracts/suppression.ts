import { z } from '@hono/zod-openapi';
import { suppressionReason } from '@edgemail/schema';
import { normalizeAddress } from './email-address.js';
import { FutureTimestamp, Timestamp } from './common.js';
import { StreamName } from './send.js';

export const SUPPRESSION_REASONS = suppressionReason.enumValues;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/** `must be one of …`, naming the value given, so a typo is plain in the answer. */
const reasonProblem = (issue: { input?: unknown }) =>
  `must be one of ${SUPPRESSION_REASONS.join(', ')}${typeof issue.input === 'string' ? ` (not "${issue.input.slice(0, 50)}")` : ''}`;

export const SuppressionReasonSchema = z.enum(SUPPRESSION_REASONS, { error: reasonProblem });

export const SuppressionSchema = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  address: z.string().openapi({ example: 'ann@example.org' }),
  reason: z.enum(SUPPRESSION_REASONS).openapi({
    description: '`hard_bounce` and `complaint` are added by the service from bounces and complaints; `manual` and `unsubscribe` by the API',
  }),
  detail: z.string().nullable().openapi({ description: 'Free text the creator gave (or the free-text reason of an entry made before reasons were an enum)', example: 'asked by phone' }),
  source_email_id: z.uuid().nullable().openapi({ description: 'The email (email log id) whose bounce or complaint added the entry; null for one made through the API' }),
  expires_at: Timestamp.nullable().openapi({ description: 'From this instant on the entry no longer applies; null: never expires' }),
  created_at: Timestamp,
  stream: z.string().nullable().openapi({ description: 'The message stream the entry holds for (docs/suppressions.md, "Per stream"); null: every stream. A one-click unsubscribe adds one for the stream of the email it came from.', example: null }),
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
  reason: SuppressionReasonSchema.default('manual')
    .openapi({ description: `One of ${SUPPRESSION_REASONS.map((r) => `\`${r}\``).join(', ')}; \`manual\` when omitted` }),
  detail: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional()
    .openapi({ description: 'Free text, 1 to 200 characters (trimmed)', example: 'asked by phone' }),
  expires_at: FutureTimestamp.optional()
    .openapi({ description: 'RFC 3339 with an offset, in the future: the entry stops applying then. Omitted: it never expires' }),
  stream: StreamName.optional()
    .openapi({ description: 'Hold for this message stream only (`transactional`, `broadcast` or one the project defined; 400 naming it otherwise). Omitted: every stream. An address may have one entry for every stream and one per stream.', example: 'broadcast' }),
}).strict().openapi('CreateSuppression');

export const ListSuppressionsFilter = {
  reason: z.enum(SUPPRESSION_REASONS, { error: reasonProblem }).optional()
    .openapi({ param: { name: 'reason', in: 'query' }, description: 'Only entries with this reason' }),
  include_expired: z.enum(['true', 'false'], { error: 'must be true or false' }).optional().transform((v) => v === 'true')
    .openapi({ param: { name: 'include_expired', in: 'query' }, type: 'boolean', default: false, description: 'Show entries past `expires_at` too (hidden by default: they no longer apply)' }),
};

export type SuppressionRecord = z.infer<typeof SuppressionSchema>;
export type CreateSuppressionInput = z.infer<typeof CreateSuppressionSchema>;
