// The `X-Service-Project-Id` header, checked to be a UUID before any query sees it.
import type { Context } from 'hono';
import { badRequest } from '../http/errors.js';

export const PROJECT_HEADER = 'X-Service-Project-Id';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function projectHeader(c: Context): string | null {
  const value = c.req.header(PROJECT_HEADER);
  if (value === undefined || value === '') return null;
  if (!UUID.test(value)) throw badRequest(`${PROJECT_HEADER} must be a project id (UUID)`);
  return value.toLowerCase();
}
