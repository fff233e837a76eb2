// Offset paging as the audit routes have it (`limit`, `offset`; no total): the
// offset lives in the URL (?offset=), so Back returns to the page you were on.
import { Link, useSearch } from 'wouter-preact';

export const PAGE = 50;
/** The routes refuse an offset above this (docs/audit.md). */
const MAX_OFFSET = 100_000;

export function useOffset(): number {
  const raw = Number(new URLSearchParams(useSearch()).get('offset') ?? 0);
  return Number.isInteger(raw) && raw > 0 ? Math.min(raw - (raw % PAGE), MAX_OFFSET) : 0;
}

/** Previous / next links; "next" only when this page came back full (there may be more). */
export function Pager({ path, offset, count }: { path: string; offset: number; count: number }) {
  const hasNext = count === PAGE && offset + PAGE <= MAX_OFFSET;
  if (offset === 0 && !hasNext) return null;
  const to = (o: number) => (o ? `${path}?offset=${o}` : path);
  return (
    <nav class="ix-pager" aria-label="Pages">
      {offset > 0 ? <Link href={to(Math.max(0, offset - PAGE))}>Newer</Link> : <span class="ix-muted">Newer</span>}
      <span>Events {count ? `${offset + 1}–${offset + count}` : `after ${offset}`}</span>
      {hasNext ? <Link href={to(offset + PAGE)}>Older</Link> : <span class="ix-muted">Older</span>}
    </nav>
  );
}

export function AuditTabs({ current }: { current: 'project' | 'security' }) {
  return (
    <nav class="ix-tabs" aria-label="Audit">
      <Link href="/audit" class="ix-tab" aria-current={current === 'project' ? 'page' : undefined}>Project audit log</Link>
      <Link href="/audit/security" class="ix-tab" aria-current={current === 'security' ? 'page' : undefined}>My security events</Link>
    </nav>
  );
}

export function when(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}
