// The body of POST /api/v1/templates/{templateId}/send-test (docs/template-rendering.md).
import { z } from '@hono/zod-openapi';
import { Uuid } from './common.js';
import { AddressList, MailboxSchema } from './send.js';
import { RenderLanguage, TemplateData } from './template-render.js';

export const SendTestSchema = z.object({
  from: MailboxSchema.openapi({ type: 'string', example: 'Acme <news@acme.test>', description: 'An address of a verified domain of the project, as for `POST /api/v1/emails/send`' }),
  to: AddressList({ min: 1, max: 1, tooMany: 'must be exactly one address: a test goes to one inbox', example: 'qa@acme.test',
    description: 'Exactly one mailbox, as a string or an array of one (as the send routes take it); more, or a list inside the string, is refused: the test goes to one real inbox' }),
  version_id: Uuid.optional().openapi({ description: 'A version of this template, a draft too (test before activating); the active version when omitted (422 when there is none)' }),
  language: RenderLanguage.optional(),
  data: TemplateData.optional(),
}).strict().openapi('TemplateSendTest');
