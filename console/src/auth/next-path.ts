/** The `next` of `/sign-in?next=…` when it is a path on this site (never `//host` or `/\host`), else the home. */
export function safeNext(search: string, fallback: string): string {
  const next = new URLSearchParams(search).get('next');
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\') || next.startsWith('/sign-in')) return fallback;
  return next;
}
