// Two small SVG charts of our own (no chart library: a few hundred lines of
// SVG are less to keep than a dependency): stacked daily bars and a usage
// meter. Colours come from classes (dark mode follows); every chart is a
// role="img" with a description carrying its numbers, and the page offers the
// same numbers as a table.
import { useUniqueId } from '../../ui/unique-id';

export interface Series {
  key: string;
  label: string;
  /** One number per day, in the order of `days`. */
  values: number[];
}

const W = 720;
const H = 220;
const PAD = { top: 10, right: 8, bottom: 26, left: 44 };

/** The smallest of 1, 2, 2.5, 5 × 10ⁿ at or above `n` (a round top for the axis). */
export function niceCeil(n: number): number {
  if (n <= 0) return 1;
  const exp = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * exp >= n) return m * exp;
  return 10 * exp;
}

export function StackedBars({ title, days, series, summary }: { title: string; days: string[]; series: Series[]; summary: string }) {
  const titleId = useUniqueId('chart');
  const descId = useUniqueId('chart');
  const totals = days.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const top = niceCeil(Math.max(0, ...totals));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(2, Math.min(28, slot * 0.7));
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * top);
  // A label every few days so they never overlap (about 10 at most).
  const every = Math.max(1, Math.ceil(days.length / 10));
  return (
    <figure class="ix-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${titleId} ${descId}`} class="ix-chart-svg">
        <title id={titleId}>{title}</title>
        <desc id={descId}>{summary}</desc>
        {ticks.map((t) => (
          <g key={t} aria-hidden="true">
            <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} class="ix-grid" />
            <text x={PAD.left - 6} y={y(t) + 4} class="ix-axis" text-anchor="end">{formatTick(t)}</text>
          </g>
        ))}
        {days.map((day, i) => {
          let base = 0;
          const x = PAD.left + i * slot + (slot - barW) / 2;
          return (
            <g key={day} class="ix-day" data-day={day}>
              <title>{`${day}: ${series.map((s) => `${s.values[i] ?? 0} ${s.label.toLowerCase()}`).join(', ')}`}</title>
              {series.map((s) => {
                const v = s.values[i] ?? 0;
                if (!v) return null;
                const y0 = y(base);
                base += v;
                return <rect key={s.key} x={x} width={barW} y={y(base)} height={Math.max(0.5, y0 - y(base))} class={`ix-s-${s.key}`} data-series={s.key} data-value={v} />;
              })}
              {i % every === 0 && <text x={x + barW / 2} y={H - 8} class="ix-axis" text-anchor="middle" aria-hidden="true">{day.slice(5)}</text>}
            </g>
          );
        })}
      </svg>
      <figcaption class="ix-legend">
        {series.map((s) => (
          <span key={s.key} class="ix-legend-item"><span class={`ix-swatch ix-s-${s.key}`} aria-hidden="true" />{s.label} <strong>{s.values.reduce((a, b) => a + b, 0).toLocaleString()}</strong></span>
        ))}
      </figcaption>
    </figure>
  );
}

function formatTick(v: number): string {
  if (v >= 1000) return `${Math.round(v / 100) / 10}k`;
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

/**
 * Used against a limit as a horizontal bar; `limit` 0 is unlimited. The bar turns
 * to the warning colour at 80 % and the danger colour when full.
 */
export function UsageMeter({ label, window, used, limit }: { label: string; window: string; used: number; limit: number }) {
  const unlimited = limit === 0;
  const share = unlimited ? 0 : Math.min(1, used / limit);
  const level = unlimited ? 'ok' : share >= 1 ? 'full' : share >= 0.8 ? 'high' : 'ok';
  const words = unlimited
    ? `${used.toLocaleString()} sent in the ${window}; the plan sets no limit`
    : `${used.toLocaleString()} of ${limit.toLocaleString()} sent in the ${window} (${Math.round(share * 100)} %), ${Math.max(0, limit - used).toLocaleString()} left`;
  return (
    <div class="ix-meter" data-testid={`usage-${label.toLowerCase()}`}>
      <div class="ix-meter-head">
        <span class="ix-meter-label">{label}</span>
        <span class="ix-meter-figure"><strong>{used.toLocaleString()}</strong>{unlimited ? ' · no limit' : ` / ${limit.toLocaleString()}`}</span>
      </div>
      <svg viewBox="0 0 100 8" preserveAspectRatio="none" role="img" aria-label={`${label}: ${words}`} class="ix-meter-svg">
        <rect x="0" y="0" width="100" height="8" rx="2" class="ix-meter-track" />
        {!unlimited && <rect x="0" y="0" width={share * 100} height="8" rx="2" class={`ix-meter-bar ix-meter-${level}`} />}
      </svg>
      <p class="ix-meter-words">{words}</p>
    </div>
  );
}
