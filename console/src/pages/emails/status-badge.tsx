import { toneOf } from './format';

/** A status word in a coloured pill (the word itself carries the meaning, not the colour). */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return <span class={`badge badge-${toneOf(status)}`} data-status={status}>{label ?? status}</span>;
}
