// The one table of every list: a header row, the rows, and when there are
// none an empty state that says what to do next.
import type { ComponentChildren } from 'preact';
import { EmptyState } from './empty-state';

export interface Column<Row> {
  /** Header text. */
  label: string;
  /** The cell; a link in the first column makes the row's detail one click away. */
  cell: (row: Row) => ComponentChildren;
  /** Right-aligned numbers, a narrow action column… */
  class?: string;
}

export interface TableProps<Row> {
  /** Says what the table lists, for screen readers. */
  caption: string;
  columns: Column<Row>[];
  rows: Row[] | undefined;
  rowKey: (row: Row) => string;
  /** Shown instead of the table when `rows` is empty. */
  empty: { title: string; children?: ComponentChildren };
  /** Under the table: "Load more", paging links. */
  footer?: ComponentChildren;
}

export function Table<Row>({ caption, columns, rows, rowKey, empty, footer }: TableProps<Row>) {
  if (rows === undefined) return <p class="loading" role="status">Loading…</p>;
  if (rows.length === 0) return <EmptyState title={empty.title}>{empty.children}</EmptyState>;
  return (
    <div class="table-wrap">
      <table class="table">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>{columns.map((c) => <th scope="col" class={c.class}>{c.label}</th>)}</tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>{columns.map((c) => <td class={c.class} data-label={c.label}>{c.cell(row)}</td>)}</tr>
          ))}
        </tbody>
      </table>
      {footer && <div class="table-footer">{footer}</div>}
    </div>
  );
}
