import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { integerQuery } from '../../../contracts/common.js';
import { ListSuppressionsFilter, SuppressionSchema } from '../../../contracts/suppression.js';
import { listSuppressions } from '../../../services/suppressions/list.js';

export const SUPPRESSIONS_LIMIT_DEFAULT = 100;
export const SUPPRESSIONS_LIMIT_MAX = 1000;

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/suppressions',
  permission: 'suppressions:read',
  summary: 'List suppressed addresses',
  description: `In address order, a page at a time: \`limit\` defaults to ${SUPPRESSIONS_LIMIT_DEFAULT} (at most ${SUPPRESSIONS_LIMIT_MAX}); pass \`next.after\` of one page as \`after\` to get the next; \`next\` is null on the last page. \`reason\` keeps one reason's entries; entries past \`expires_at\` no longer apply and are left out unless \`include_expired=true\`.`,
  tags: ['Suppressions'],
  request: {
    query: z.object({
      limit: integerQuery('limit', 1, SUPPRESSIONS_LIMIT_MAX, SUPPRESSIONS_LIMIT_DEFAULT),
      after: z.string().min(1, 'must not be empty').max(1000, 'must be at most 1000 characters').optional()
        .openapi({ param: { name: 'after', in: 'query' }, description: 'Start after this entry (exclusive): `next.after` of the previous page (an address, then a space and a stream for a stream\'s entry)' }),
      ...ListSuppressionsFilter,
    }),
  },
  responses: {
    200: {
      description: 'A page of suppressions',
      content: {
        'application/json': {
          schema: z.object({ suppressions: z.array(SuppressionSchema), next: z.object({ after: z.string() }).nullable() }),
        },
      },
    },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await listSuppressions(c.get('db'), c.get('projectId'), c.req.valid('query')), 200);
