import { z } from '@hono/zod-openapi';
import { normalizeDomainName } from './domain-name.js';
import { Timestamp } from './common.js';

export const DomainSchema = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  name: z.string().openapi({ example: 'acme.example' }),
  created_at: Timestamp,
}).openapi('Domain');

export const CreateDomainSchema = z.object({
  name: z.string()
    .trim()
    .transform((input, ctx) => {
      const result = normalizeDomainName(input);
      if ('problem' in result) {
        ctx.addIssue({ code: 'custom', message: result.problem });
        return z.NEVER;
      }
      return result.name;
    })
    .openapi({
      type: 'string',
      example: 'acme.example',
      description: 'A DNS name of at least two labels; stored lower case without a trailing dot; internationalised names in punycode',
    }),
}).strict().openapi('CreateDomain');

export type DomainRecord = z.infer<typeof DomainSchema>;
