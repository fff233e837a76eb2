import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { attachmentResponse } from '../../../http/download.js';
import { AttachmentDownload, AttachmentIndex, Uuid } from '../../../contracts/common.js';
import { openAttachment } from '../../../services/inbound-emails/attachment.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/inbound-emails/{uuid}/attachments/{idx}',
  permission: 'inbound:read',
  summary: 'Download an attachment',
  description: '`idx` is zero-based, in the order of the record\'s `attachments`. The bytes come with the attachment\'s own Content-Type (`application/octet-stream` when it is not a well-formed media type) and its filename in Content-Disposition (RFC 6266, `filename*` for a non-ASCII name). 404 when `idx` is past the list or the bytes were not stored.',
  tags: ['Inbound email'],
  request: {
    params: z.object({
      uuid: Uuid.openapi({ param: { name: 'uuid', in: 'path' }, example: '0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11' }),
      idx: AttachmentIndex,
    }),
  },
  errors: [404],
  responses: {
    200: AttachmentDownload,
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { uuid, idx } = c.req.valid('param');
  const { meta, object } = await openAttachment(c.get('db'), c.env.MAIL_STORE, c.get('projectId'), uuid, idx);
  return attachmentResponse(meta, object, idx);
};
