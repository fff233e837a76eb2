import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { attachmentResponse } from '../../../http/download.js';
import { AttachmentDownload, AttachmentIndex, Uuid } from '../../../contracts/common.js';
import { openOutboundAttachment } from '../../../services/emails/attachment.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/emails/{id}/attachments/{idx}',
  permission: 'emails:read',
  summary: 'Download an attachment of a sent email',
  description: '`idx` is zero-based, in the order of the send\'s `attachments`. The bytes come with the attachment\'s Content-Type and its filename in Content-Disposition. 404 when `idx` is past the list.',
  tags: ['Emails'],
  request: {
    params: z.object({
      id: Uuid.openapi({ param: { name: 'id', in: 'path' }, example: '0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11' }),
      idx: AttachmentIndex,
    }),
  },
  errors: [404],
  responses: {
    200: AttachmentDownload,
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { id, idx } = c.req.valid('param');
  const { meta, object } = await openOutboundAttachment(c.get('db'), c.env.MAIL_STORE, c.get('projectId'), id, idx);
  return attachmentResponse(meta, object, idx);
};
