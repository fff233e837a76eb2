import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { CreateSmtpServerSchema, SmtpServerSchema } from '../../../contracts/smtp-server.js';
import { createSmtpServer } from '../../../services/smtp-servers/create.js';
import { projectScope } from '../../../services/smtp-servers/scope.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/smtp-servers',
  permission: 'smtpservers:write',
  summary: 'Add an SMTP server',
  description: [
    'Relay nodes deliver the project\'s mail through its SMTP servers (oldest first) instead of the shared pool or the recipients\' MX.',
    'The password is stored sealed and never returned: records show `has_password`. A password needs a `username`; CR or LF in any field is refused. There is no update: add the new server, then delete the old one.',
    'A host that is, or resolves (through `dns.doh_url`) to, loopback, RFC 1918 or other reserved space is refused (400 naming `host`) unless `smtp_servers.allow_private_targets` is set; the test route checks it again. When the resolver cannot answer: 503.',
  ].join('\n\n'),
  tags: ['SMTP servers'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateSmtpServerSchema } } } },
  errors: [503],
  responses: {
    201: { description: 'Server added', content: { 'application/json': { schema: z.object({ smtp_server: SmtpServerSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({
    smtp_server: await createSmtpServer(c.get('db'), c.get('config'), projectScope(c.get('projectId')), c.req.valid('json')),
  }, 201);
