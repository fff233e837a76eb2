// Wire format of Neon's SQL-over-HTTP endpoint (`POST /sql`), as spoken by
// @neondatabase/serverless 1.2: request parsing, result and error encoding.
import type { FieldDef, QueryArrayResult } from 'pg';

export interface HttpQuery {
  query: string;
  params: unknown[];
}

/** A parsed request body: one query, or a batch run in one transaction. */
export type HttpRequestBody = { kind: 'single'; query: HttpQuery } | { kind: 'batch'; queries: HttpQuery[] };

/** Thrown for malformed requests; answered as HTTP 400 `{ message }`. */
export class BadRequest extends Error {}

function toQuery(value: unknown): HttpQuery {
  const v = value as { query?: unknown; params?: unknown } | null;
  if (typeof v?.query !== 'string') throw new BadRequest('missing "query" string');
  if (v.params !== undefined && !Array.isArray(v.params)) throw new BadRequest('"params" must be an array');
  // The driver already turned every value into text (or null) with pg's prepareValue.
  return { query: v.query, params: v.params ?? [] };
}

export function parseRequestBody(text: string): HttpRequestBody {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new BadRequest('request body is not valid JSON');
  }
  const queries = (json as { queries?: unknown } | null)?.queries;
  if (queries === undefined) return { kind: 'single', query: toQuery(json) };
  if (!Array.isArray(queries)) throw new BadRequest('"queries" must be an array');
  return { kind: 'batch', queries: queries.map(toQuery) };
}

const ISOLATION: Record<string, string> = {
  ReadUncommitted: 'READ UNCOMMITTED',
  ReadCommitted: 'READ COMMITTED',
  RepeatableRead: 'REPEATABLE READ',
  Serializable: 'SERIALIZABLE',
};

/** The BEGIN statement for a batch, from the `Neon-Batch-*` headers. */
export function beginStatement(headers: { get(name: string): string | undefined }): string {
  const modes: string[] = [];
  const level = headers.get('neon-batch-isolation-level');
  if (level !== undefined) {
    const sql = ISOLATION[level];
    if (!sql) throw new BadRequest(`invalid Neon-Batch-Isolation-Level: ${level}`);
    modes.push(`ISOLATION LEVEL ${sql}`);
  }
  const readOnly = headers.get('neon-batch-read-only');
  if (readOnly !== undefined) modes.push(readOnly === 'true' ? 'READ ONLY' : 'READ WRITE');
  const deferrable = headers.get('neon-batch-deferrable');
  if (deferrable !== undefined) modes.push(deferrable === 'true' ? 'DEFERRABLE' : 'NOT DEFERRABLE');
  return modes.length ? `BEGIN ${modes.join(', ')}` : 'BEGIN';
}

/**
 * One result as Neon sends it. Values stay Postgres text (the driver parses
 * them by `dataTypeID`); the driver indexes `rows` positionally, so with
 * `Neon-Array-Mode: true` (always sent by 1.x) rows are arrays.
 */
export function encodeResult(result: QueryArrayResult, arrayMode: boolean) {
  const fields = result.fields.map((f: FieldDef) => ({
    name: f.name,
    dataTypeID: f.dataTypeID,
    tableID: f.tableID,
    columnID: f.columnID,
    dataTypeSize: f.dataTypeSize,
    dataTypeModifier: f.dataTypeModifier,
    format: 'text',
  }));
  const rows = arrayMode
    ? result.rows
    : result.rows.map((row) => Object.fromEntries(fields.map((f, i) => [f.name, row[i]])));
  return { command: result.command, rowCount: result.rowCount, fields, rows, rowAsArray: arrayMode };
}

// Fields of pg's DatabaseError that the driver copies onto NeonDbError.
const ERROR_FIELDS = [
  'severity', 'code', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery', 'where',
  'schema', 'table', 'column', 'dataType', 'constraint', 'file', 'line', 'routine',
] as const;

/** True for errors reported by the Postgres server: a SQLSTATE plus a severity (Node's EPIPE has no severity). */
export function isPostgresError(err: unknown): err is Error & Record<string, unknown> {
  const { code, severity } = (err instanceof Error ? err : {}) as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string';
}

/** The driver raises NeonDbError from a 400 whose JSON has `message` plus these fields. */
export function encodeError(err: unknown): Record<string, unknown> {
  const body: Record<string, unknown> = { message: err instanceof Error ? err.message : String(err) };
  if (isPostgresError(err)) for (const key of ERROR_FIELDS) if (err[key] !== undefined) body[key] = err[key];
  return body;
}
