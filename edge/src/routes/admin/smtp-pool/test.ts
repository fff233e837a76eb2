import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { SmtpProbeQuery } from '../../../contracts/smtp-server.js';
import { POOL_SCOPE } from '../../../services/smtp-servers/scope.js';
import { testSmtpServer } from '../../../services/smtp-servers/test-connection.js';
import { PROBE_DESCRIPTION, probeResponses } from '../../api/smtp-servers/probe-doc.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/admin/smtp-pool/{id}/test',
  permission: 'platform:admin',
  summary: 'Test a server of the shared SMTP pool',
  description: PROBE_DESCRIPTION,
  tags: ['Admin'],
  request: { params: IdParams, query: SmtpProbeQuery },
  errors: [404],
  responses: probeResponses,
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json(await testSmtpServer(c.get('db'), c.get('config'), POOL_SCOPE, c.req.valid('param').id, c.req.valid('query').timeout_ms), 200);
