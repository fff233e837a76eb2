// What the two log lists (`GET /api/v1/emails`, `GET /api/v1/sandbox/emails`) share: paging, filters, answer.
import { z } from '@hono/zod-openapi';
import { EmailCursorSchema, EmailSchema, EMAILS_LIMIT_DEFAULT, EMAILS_LIMIT_MAX, type ListEmailsInput } from '../../../contracts/email.js';
import type { EmailListQuery } from '../../../services/emails/list.js';

/** How both log lists page: the inbound list's keyset paging, over `(created_at, id)`. */
export const PAGING = `Newest first by \`(created_at, id)\`, a page at a time: \`limit\` defaults to ${EMAILS_LIMIT_DEFAULT} (at most ${EMAILS_LIMIT_MAX}). For the next page send \`next.before\` and \`next.before_id\` (the last row's \`created_at\` and \`id\`) as \`before\` and \`before_id\`; one without the other is 400. \`next\` is null on the last page. No total, no offset. Filters: \`status\`, \`recipient\` (exact, case-insensitive), \`tag\`, \`since\` (created at or after) and \`until\` (created before), RFC 3339.`;

export const ListResponse = z.object({ emails: z.array(EmailSchema), next: EmailCursorSchema.nullable() });

/** The query as the service takes it (`offset`, like any parameter not declared, is refused by the input guard). */
export function listQuery(q: ListEmailsInput): EmailListQuery {
  const { before, before_id, ...filters } = q;
  return { ...filters, cursor: before !== undefined && before_id !== undefined ? { before, before_id } : undefined };
}

