import { z, type RouteHandler } from '@hono/zod-openapi';
import { catalogue } from '@edgemail/shared';
import { defineRoute } from '../../../http/define-route.js';
import type { AppEnv } from '../../../env.js';

const PermissionSchema = z.object({
  resource: z.string().openapi({ example: 'emails' }),
  actions: z.array(z.enum(['read', 'write', 'delete'])),
  permissions: z.array(z.string()).openapi({ example: ['emails:read', 'emails:write'] }),
}).openapi('PermissionResource');

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/permissions',
  permission: 'authenticated',
  summary: 'The permission catalogue',
  description: 'Every `<resource>:<action>` a key can hold. `*` covers all of them, including resources added later.',
  tags: ['API keys'],
  responses: {
    200: {
      description: 'The catalogue',
      content: { 'application/json': { schema: z.object({ wildcard: z.literal('*'), resources: z.array(PermissionSchema), permissions: z.array(z.string()) }) } },
    },
  },
});

const body = {
  wildcard: '*' as const,
  resources: Object.entries(catalogue).map(([resource, actions]) => ({
    resource, actions: [...actions], permissions: actions.map((a) => `${resource}:${a}`),
  })),
  permissions: Object.entries(catalogue).flatMap(([r, actions]) => actions.map((a) => `${r}:${a}`)),
};

export const handler: RouteHandler<typeof route, AppEnv> = (c) => c.json(body, 200);
