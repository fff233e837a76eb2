// Keyset paging for the data export: every kind is read newest first by
// `(<timestamp>, id)`, one bounded page per query, filtered by project id in
// SQL, so the Worker never holds more than a page whatever the table's size.
import { sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';

/** Rows in a page at most. */
export const PAGE_ROWS = 500;

/**
 * Bytes of message bodies in a page at most (emails' text and html, inbound
 * mail's text_body and html_body): a page stops before the row that would
 * pass it, so that 500 large messages never sit in memory together. A single
 * larger row is a page of its own.
 */
export const PAGE_BODY_BYTES = 4 * 1024 * 1024;

/** Where the next page starts: the last row's timestamp (to the microsecond) and id. */
export interface Cursor { at: string; id: string }

/**
 * The column as exact RFC 3339 text in UTC, microseconds included (a
 * JavaScript Date would drop them, and the next page would skip or repeat
 * rows that share a millisecond).
 */
export const cursorText = (at: PgColumn) =>
  sql<string>`to_char(${at} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The rows after `cursor` in newest-first order; every row on the first page. */
export const olderThan = (cursor: Cursor | null, at: PgColumn, id: PgColumn): SQL | undefined =>
  cursor ? sql`(${at}, ${id}) < (${cursor.at}::timestamptz, ${cursor.id}::uuid)` : undefined;

/**
 * Newest first, in the NULLS order of the index the table is read by (the
 * columns are NOT NULL, but the planner reads an index in order only when the
 * ORDER BY spells it as built): `desc` for the `(project_id, <ts> desc, id
 * desc)` indexes (drizzle's `.desc()` builds DESC NULLS LAST), `asc` for an
 * ascending `(…, <ts>[, id])` one, read backwards (DESC NULLS FIRST).
 */
export const newestFirst = (at: PgColumn, id: PgColumn, index: 'desc' | 'asc') => index === 'desc'
  ? [sql`${at} desc nulls last`, sql`${id} desc nulls last`]
  : [sql`${at} desc nulls first`, sql`${id} desc nulls first`];

/**
 * The leading rows of a page whose bodies stay within PAGE_BODY_BYTES (at
 * least one row), and whether rows may follow them.
 * @param rows a page of at most PAGE_ROWS rows, in order, each with its bodies' size
 */
export function withinBodyBudget<R extends { bytes: number }>(rows: R[]): { kept: R[]; more: boolean } {
  let total = 0;
  let n = 0;
  while (n < rows.length && (n === 0 || total + rows[n]!.bytes <= PAGE_BODY_BYTES)) total += rows[n++]!.bytes;
  return { kept: rows.slice(0, n), more: n < rows.length || rows.length === PAGE_ROWS };
}

/** A page of rows read with `cursorText` as `cursorAt`, presented; a full page may have a next. */
export function pageOf<R extends { id: string; cursorAt: string }>(rows: R[], present: (row: R) => object): { records: object[]; next: Cursor | null } {
  const last = rows.at(-1);
  return { records: rows.map(present), next: rows.length === PAGE_ROWS && last ? { at: last.cursorAt, id: last.id } : null };
}
