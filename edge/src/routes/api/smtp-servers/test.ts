import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { SmtpProbeQuery } from '../../../contracts/smtp-server.js';
import { projectScope } from '../../../services/smtp-servers/scope.js';
import { testSmtpServer } from '../../../services/smtp-servers/test-connection.js';
import { PROBE_DESCRIPTION, probeResponses } from './probe-doc.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/smtp-servers/{id}/test',
  permission: 'smtpservers:write',
  auditType: 'smtpserver.test',
  summary: 'Test an SMTP server',
  description: PROBE_DESCRIPTION,
  tags: ['SMTP servers'],
  request: { params: IdParams, query: SmtpProbeQuery },
  errors: [404],
  responses: probeResponses,
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await testSmtpServer(c.get('db'), c.get('config'), projectScope(c.get('projectId')), c.req.valid('param').id, c.req.valid('query').timeout_ms), 200);
