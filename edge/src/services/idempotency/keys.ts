// `Idempotency-Key` on the send routes (docs/sending.md, "Idempotency"): the
// first answer to a key is kept 24 hours with a hash of the request body and
// replayed for the same body; another body under the same key is 409. The
// record is written in the same transaction as the rows the answer names.
import { and, eq, gt, sql, type SQL } from 'drizzle-orm';
import { idempotencyKeys } from '@edgemail/schema';
import { sha256Hex } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
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
 * The key's unexpired record in the project (no row without a key), as a
 * query a caller can run inside a `db.batch`; read the row with `storedAnswer`.
 * `key` is a `storedKey`.
 */
export const findAnswerQuery = (db: Db, projectId: string, key: string | null) => db.select({
  route: idempotencyKeys.route, requestHash: idempotencyKeys.requestHash,
  status: idempotencyKeys.responseStatus, body: idempotencyKeys.responseBody,
}).from(idempotencyKeys)
  .where(and(eq(idempotencyKeys.projectId, projectId), eq(idempotencyKeys.key, key ?? ''), sql`${key !== null}`, gt(idempotencyKeys.createdAt, sql`now() - ${IDEMPOTENCY_TTL}`)));

/** The stored answer of a `findAnswerQuery` row. */
export function storedAnswer(row: Awaited<ReturnType<typeof findAnswerQuery>>[number] | undefined): StoredAnswer | null {
  return row ? { ...row, body: storedBody(row.body) } : null;
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

/** Statement of the send batch, ahead of its guard: an expired record of this key (a `storedKey`) no longer holds the key. */
export function forgetExpired(db: Db, projectId: string, key: string) {
  return db.execute(sql`delete from ${idempotencyKeys} where project_id = ${projectId} and key = ${key} and created_at <= now() - ${IDEMPOTENCY_TTL}`);
}

/** The guard of the send batch's inserts: nobody holds the key, a `storedKey` (run after `forgetExpired`, under the send lock). */
export function keyIsFree(projectId: string, key: string) {
  return sql`not exists (select 1 from ${idempotencyKeys} where project_id = ${projectId} and key = ${key})`;
}

/**
 * Statement of the send batch: the answer, recorded only when the rows it
 * names were written (`written`, a condition on them). On a conflict the
 * first record stays.
 */
export function recordAnswer(db: Db, projectId: string, request: IdempotentRequest, answer: { status: number; body: unknown }, written: SQL) {
  return db.execute(sql`
    insert into ${idempotencyKeys} (project_id, key, route, request_hash, response_status, response_body, created_at)
    select ${projectId}, ${storedKey(request)}, ${request.route}, ${request.requestHash}, ${answer.status}, to_jsonb(${JSON.stringify(answer.body)}::text), now()
    where ${written}
    on conflict (project_id, key) do nothing`);
}
