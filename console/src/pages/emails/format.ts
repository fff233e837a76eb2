// Small formatting shared by the mail pages (emails, send, inbound, webhooks).

/** "29 Nov, 10:51:26" in the reader's zone; the full ISO time goes in the title attribute. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** 1.2 kB, 3.4 MB. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} kB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Statuses that read as good, bad or under way, for the badge's colour. */
const TONE: Record<string, 'ok' | 'bad' | 'wait' | 'muted'> = {
  sent: 'ok', verified: 'ok', succeeded: 'ok', received: 'ok', pass: 'ok', captured: 'muted', ok: 'ok',
  failed: 'bad', bounced: 'bad', complained: 'bad', rejected: 'bad', fail: 'bad', missing: 'bad', mismatch: 'bad', revoked: 'bad',
  queued: 'wait', sending: 'wait', pending: 'wait', softfail: 'wait',
};

export function toneOf(status: string): string {
  return TONE[status] ?? 'muted';
}
