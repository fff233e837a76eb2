// `Idempotency-Key` on the send routes (docs/sending.md, "Idempotency"): the
// first answer to a key is kept 24 hours with a hash of the request body and
// replayed for the same body; another body under the same key is 409. The
// record is read and written in the send's one statement (services/emails/send.ts),
// with the rows the answer names.
import { sql, type SQL } from 'drizzle-orm';
import { idempotencyKeys } from '@edgemail/schema';
import { sha256Hex } from '@edgemail/shared';
import { conflict } from '../errors.js';

/** How long a key is remembered; after that it is ignored and purged. */
export const IDEMPOTENCY_TTL = sql.raw(`interval '24 hours'`);

/** What one request under a key is: the key, the route it was sent to, its body's hash. */
export interface IdempotentRequest {
  key: string;
  /** `emails.send` or `emails.batch`: a key used on one route is another request on the other. */
  route: string;
  requestHash: string;
  /** Sent with a sandbox key: its keys are a namespace of their own (see `storedKey`). */
  sandbox: boolean;
}

/**
 * The key as stored. Sandbox and live sends do not share keys: a live send
 * must never replay a captured answer, nor a sandbox send a live one. The
 * sandbox prefix ends in U+001F, which no Idempotency-Key may hold (printable
 * ASCII only), so no live key can spell it; live keys are stored as given.
 */
export const storedKey = (request: IdempotentRequest) => (request.sandbox ? `sandbox\u001f${request.key}` : request.key);

/** A remembered first answer. */
export interface StoredAnswer { route: string; requestHash: string; status: number; body: unknown }

/** sha256 (hex) of the raw request body, as received. */
export const requestHash = (rawBody: string) => sha256Hex(rawBody);

/**
 * The key's unexpired record in the project, as a query for the send's
 * statement (no row without a key). `key` is a `storedKey`.
 */
export function unexpiredRecord(projectId: string, key: string | null): SQL {
  return sql`select route, request_hash, response_status, response_body from ${idempotencyKeys}
    where project_id = ${projectId} and key = ${key ?? ''} and ${key !== null} and created_at > now() - ${IDEMPOTENCY_TTL}`;
}

/** An `unexpiredRecord` row, as the send's verdict carries it (null columns without one). */
export type RecordColumns = { route: string | null; request_hash: string | null; response_status: number | null; response_body: unknown };

/** The stored answer of `RecordColumns`, or null without a record. */
export function storedAnswer(row: RecordColumns): StoredAnswer | null {
  if (row.route === null) return null;
  return { route: row.route, requestHash: row.request_hash!, status: row.response_status!, body: storedBody(row.response_body) };
}

/**
 * The first answer is kept as its JSON text (a jsonb string): jsonb would
 * reorder the keys of an object, and a replay is the first answer byte for byte.
 */
export const storedBody = (stored: unknown): unknown => (typeof stored === 'string' ? JSON.parse(stored) : stored);

/** The answer to a request whose key is already taken: the first answer again, or 409. */
export function replayOrConflict(stored: StoredAnswer, request: IdempotentRequest): { status: number; body: unknown } {
  if (stored.route !== request.route || stored.requestHash !== request.requestHash) {
    throw conflict(`Idempotency-Key ${request.key} was used with another request body`);
  }
  return { status: stored.status, body: stored.body };
}

/**
 * A data-modifying part of the send's statement: records `answerText` (an SQL
 * text, the answer's JSON) under the key when `accepted` (an SQL condition).
 * An expired record of the key is replaced; an unexpired one never is (the
 * statement accepts only when there is none, under the send lock).
 */
export function recordAnswer(projectId: string, request: IdempotentRequest, status: number, answerText: SQL, accepted: SQL): SQL {
  return sql`insert into ${idempotencyKeys} as ik (project_id, key, route, request_hash, response_status, response_body, created_at)
    select ${projectId}, ${storedKey(request)}, ${request.route}, ${request.requestHash}, ${status}, to_jsonb(${answerText}), now()
    where ${accepted}
    on conflict (project_id, key) do update set route = excluded.route, request_hash = excluded.request_hash,
      response_status = excluded.response_status, response_body = excluded.response_body, created_at = excluded.created_at
      where ik.created_at <= now() - ${IDEMPOTENCY_TTL}`;
}
