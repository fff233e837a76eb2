import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { SendResultSchema } from '../../../contracts/email.js';
import { TemplateParams } from '../../../contracts/template-render.js';
import { SendTestSchema } from '../../../contracts/template-send-test.js';
import { sendTest } from '../../../services/templates/send-test.js';
import { sendContext } from '../emails/send-context.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/templates/{templateId}/send-test',
  // It sends mail to an address the caller chooses: the sending permission, as the send route's.
  permission: 'emails:write',
  sandboxPermission: 'sandbox:write',
  auditType: 'template.send_test',
  summary: 'Send a test of a template version',
  description: [
    'Renders a version of the template (`version_id`, a draft too, to test it before activating; the active version when omitted) with `data`, or the version\'s `sample_data` when no data is given, and sends it to one address (`to`) from `from` (an address of a verified domain of the project).',
    'It goes through the normal send path: suppressions, the plan\'s hourly and daily limits (429, and it counts against them), delivery by the relay nodes. The email log shows it with `origin: test`, and its detail names `template_id` and `template_version_id`.',
    'Refusals as for preview: 404 for an unknown or another project\'s template or version, 400 for a `language` that is not BCP 47, 422 naming the problem for a render that fails (`missing variable: user.name (in html)`) or crosses a bound (`templates.max_nesting_depth`, `templates.max_render_steps`, `templates.max_rendered_bytes`), no localization, or no active version when `version_id` is omitted; nothing is sent.',
    'Needs `emails:write` (it sends mail, like `POST /api/v1/emails/send`, which renders templates with that permission too); a sandbox key needs `sandbox:write`, and its test is captured, not delivered.',
  ].join(' '),
  tags: ['Templates'],
  request: {
    params: TemplateParams,
    body: { required: true, content: { 'application/json': { schema: SendTestSchema } } },
  },
  errors: [404, 422],
  responses: {
    201: { description: 'Accepted: the message and its one recipient row, as the send route answers', content: { 'application/json': { schema: SendResultSchema } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  // No Idempotency-Key on a test: the route name is only its namespace, unused without a key.
  const ctx = await sendContext(c, 'emails.send', undefined);
  const result = await sendTest(ctx, c.req.valid('param').templateId, c.req.valid('json'));
  return c.json(result, 201);
};
