import type { Context } from 'hono';
import { isUuid } from '@edgemail/shared';
import { badRequest } from '../http/errors.js';

export const PROJECT_HEADER = 'X-Service-Project-Id';

/** The project named by the header, lower-cased; null when absent; 400 when not a UUID. */
export function projectHeader(c: Context): string | null {
  const value = c.req.header(PROJECT_HEADER);
  if (value === undefined || value === '') return null;
  if (!isUuid(value)) throw badRequest(`${PROJECT_HEADER} must be a project id (UUID)`);
  return value.toLowerCase();
}
