// The paging of every audit-trail read (the project audit log, a person's
// security trail, the platform admin's view of all trails): newest first,
// `limit` and `offset` in the query, echoed in the answer.
import { z } from '@hono/zod-openapi';
import { integerQuery } from './common.js';

export const AUDIT_LIMIT_DEFAULT = 50;
export const AUDIT_LIMIT_MAX = 200;
export const AUDIT_OFFSET_MAX = 100_000;

export const auditPageQuery = {
  limit: integerQuery('limit', 1, AUDIT_LIMIT_MAX, AUDIT_LIMIT_DEFAULT),
  offset: integerQuery('offset', 0, AUDIT_OFFSET_MAX, 0),
};

export const AUDIT_PAGE_TEXT = `\`limit\` defaults to ${AUDIT_LIMIT_DEFAULT} (at most ${AUDIT_LIMIT_MAX}); \`offset\` to 0 (at most ${AUDIT_OFFSET_MAX}).`;

export interface AuditPage { limit: number; offset: number }
