import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { SubmissionAuthAnswerSchema, SubmissionAuthSchema } from '../../../contracts/relay-submission.js';
import { checkSubmissionKey } from '../../../services/submission/check-key.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/submission/auth',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Check an SMTP AUTH password',
  description: 'A relay node\'s submission listener asks whether the password a client gave in `AUTH PLAIN` or `AUTH LOGIN` is a project API key that may submit from `client_address`: not revoked, not expired, `allowed_ips` admitting the address, holding `emails:write` (a sandbox key: `sandbox:write`), and of the node\'s own project when the node is not installation-wide. Answers `ok: true` with the project and the sandbox flag, or `ok: false` with the reason (`invalid`, `revoked`, `expired`, `ip_not_allowed`, `permission`, `node_scope`), which the node answers `535 5.7.8`. Records the key\'s last use.',
  tags: ['Relay'],
  request: { body: { required: true, content: { 'application/json': { schema: SubmissionAuthSchema } } } },
  responses: {
    200: { description: 'The verdict', content: { 'application/json': { schema: SubmissionAuthAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { token, client_address } = c.req.valid('json');
  const verdict = await checkSubmissionKey(c.get('db'), c.get('relayNode'), token, client_address);
  if (!verdict.ok) return c.json(verdict, 200);
  if (verdict.touch) c.executionCtx.waitUntil(verdict.touch);
  return c.json({ ok: true as const, project_id: verdict.key.projectId, sandbox: verdict.key.sandbox }, 200);
};
