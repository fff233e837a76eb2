// A list read a page at a time with the API's keyset cursor (`next` →
// `before` + `before_id`): the first page on open, the next one when asked,
// never every row. Live pages patch rows in place and put new ones on top.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from '../../api/errors';

export interface Cursor { before: string; before_id: string }
export interface PageOf<Row> { rows: Row[]; next: Cursor | null }

export interface Keyset<Row> {
  rows: Row[] | undefined;
  /** More rows after the last one shown. */
  more: boolean;
  loadingMore: boolean;
  error: string | undefined;
  loadMore: () => Promise<void>;
  /** Reads the first page again (a filter changed, or events may have been missed). */
  reload: () => Promise<void>;
  /** Replaces a shown row (by id) or, with `addIfMissing`, puts it on top. */
  upsert: (row: Row, addIfMissing: boolean) => void;
  has: (id: string) => boolean;
}

export function useKeyset<Row extends { id: string }>(read: (cursor: Cursor | null) => Promise<PageOf<Row>>, deps: unknown[]): Keyset<Row> {
  const [rows, setRows] = useState<Row[] | undefined>(undefined);
  const [next, setNext] = useState<Cursor | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const generation = useRef(0);
  const shown = useRef(new Set<string>());
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const page = await read(null);
      if (mine !== generation.current) return;
      shown.current = new Set(page.rows.map((r) => r.id));
      setRows(page.rows);
      setNext(page.next);
      setError(undefined);
    } catch (e) {
      if (mine === generation.current) { setError(messageOf(e)); setRows((r) => r ?? []); }
    }
  }, deps);
  useEffect(() => { setRows(undefined); void reload(); }, [reload]);
  const loadMore = useCallback(async () => {
    if (!next) return;
    const mine = generation.current;
    setLoadingMore(true);
    try {
      const page = await read(next);
      if (mine !== generation.current) return;
      const fresh = page.rows.filter((r) => !shown.current.has(r.id));
      for (const r of fresh) shown.current.add(r.id);
      setRows((old) => [...(old ?? []), ...fresh]);
      setNext(page.next);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setLoadingMore(false);
    }
  }, [next, read]);
  const upsert = useCallback((row: Row, addIfMissing: boolean) => {
    if (!shown.current.has(row.id) && !addIfMissing) return;
    const isNew = !shown.current.has(row.id);
    shown.current.add(row.id);
    setRows((old) => {
      const list = old ?? [];
      return isNew ? [row, ...list] : list.map((r) => (r.id === row.id ? row : r));
    });
  }, []);
  const has = useCallback((id: string) => shown.current.has(id), []);
  return { rows, more: next !== null, loadingMore, error, loadMore, reload, upsert, has };
}
