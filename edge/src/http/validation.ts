// Turns a failed zod validation into 400 naming each field and its problem.
import type { z } from 'zod';
import { ApiError } from './errors.js';

export function validationError(error: z.ZodError, target: string): ApiError {
  const fields: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = issue.path.length ? issue.path.join('.') : target;
    fields[key] ??= issue.message;
  }
  const [first] = Object.entries(fields);
  const message = first ? `invalid ${target === 'json' ? 'request body' : target}: ${first[0]}: ${first[1]}` : 'invalid request';
  return new ApiError(400, message, fields);
}
