// A template's test send (docs/template-rendering.md, "Send a test"): one
// version (a draft too) rendered with the data or its sample data, then the
// normal send path (from-domain, suppressions, plan limits, the relay nodes),
// marked `origin: test` in the email log.
import type { SendResult } from '../../contracts/email.js';
import type { z } from '@hono/zod-openapi';
import type { SendTestSchema } from '../../contracts/template-send-test.js';
import { sendMessages, type SendContext } from '../emails/send.js';
import { renderVersion } from './render-version.js';
import { renderLimits } from './render.js';

export async function sendTest(ctx: SendContext, templateId: string, body: z.infer<typeof SendTestSchema>): Promise<SendResult> {
  const out = await renderVersion(ctx.db, ctx.projectId, { templateId, versionId: body.version_id, language: body.language, data: body.data, limits: renderLimits(ctx.config) });
  const input = { from: body.from, to: body.to, subject: out.subject, html: out.html ?? undefined, text: out.text ?? undefined };
  const answer = await sendMessages({ ...ctx, origin: 'test', idempotency: undefined }, [
    { input, field: (name) => name, renderedFrom: { templateId, versionId: out.versionId } },
  ], ([result]) => result!);
  return answer.body;
}
