// How a relay node reads an answer of the edge: one parse with the answer's
// schema (keys a newer edge added are dropped, not refused), and when the body
// does not fit, the first field that does not and why.
import type { z } from 'zod';

/** The schema of one answer (so that the node names no zod type itself). */
export type AnswerSchema<T> = z.ZodType<T>;

export type AnswerReading<T> = { ok: true; answer: T } | { ok: false; field: string; problem: string };

/** @example const read = readAnswer(DomainsAnswer, JSON.parse(text)); if (!read.ok) throw …(read.field, read.problem); */
export function readAnswer<T>(schema: AnswerSchema<T>, json: unknown): AnswerReading<T> {
  const read = schema.safeParse(json);
  if (read.success) return { ok: true, answer: read.data };
  const issue = read.error.issues[0];
  return { ok: false, field: issue?.path.length ? issue.path.join('.') : 'the body', problem: issue?.message ?? 'does not fit' };
}
