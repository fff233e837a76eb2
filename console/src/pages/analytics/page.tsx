// Analytics: how the project's mail went, per UTC day (docs/analytics.md), and
// how much of the plan's hourly and daily limits it is using now (GET
// /api/v1/usage). Both re-read shortly after mail moves (the event stream's
// email.status events), so a send shows up without reloading.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiSchemas } from '../../api/client';
import { ApiError, messageOf, ok } from '../../api/errors';
import { useLiveEvents } from '../../live';
import { Button, Field, FormError, Page } from '../../ui';
import { StackedBars, UsageMeter, type Series } from './charts';
import './insights.css';

type Analytics = ApiSchemas['Analytics'];
type Usage = ApiSchemas['Usage'];
const RANGES = [7, 30, 90] as const;
/** A burst of events makes one re-read, this long after the last of them. */
const LIVE_SETTLE_MS = 800;

const OUTCOMES = [
  { key: 'sent', label: 'Sent' },
  { key: 'bounced', label: 'Bounced' },
  { key: 'complained', label: 'Complained' },
  { key: 'failed', label: 'Failed' },
] as const;

function utcDay(offsetDays: number): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

export default function AnalyticsPage() {
  const [range, setRange] = useState<(typeof RANGES)[number]>(30);
  const [domain, setDomain] = useState('');
  const [tag, setTag] = useState('');
  const [filters, setFilters] = useState({ domain: '', tag: '' });
  const [data, setData] = useState<Analytics>();
  const [usage, setUsage] = useState<Usage>();
  const [error, setError] = useState<string>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const [showTable, setShowTable] = useState(false);

  const readAnalytics = useCallback(async () => {
    try {
      const { analytics } = await ok(api.GET('/api/v1/analytics', {
        params: { query: { from: utcDay(-(range - 1)), to: utcDay(0), ...(filters.domain ? { domain: filters.domain } : {}), ...(filters.tag ? { tag: filters.tag } : {}) } },
      }));
      setData(analytics);
      setError(undefined);
      setFields({});
    } catch (e) {
      if (e instanceof ApiError && Object.keys(e.fields).length) setFields(e.fields);
      else setError(messageOf(e));
    }
  }, [range, filters]);
  const readUsage = useCallback(async () => {
    try {
      setUsage((await ok(api.GET('/api/v1/usage'))).usage);
    } catch (e) {
      setError(messageOf(e));
    }
  }, []);
  useEffect(() => { void readAnalytics(); }, [readAnalytics]);
  useEffect(() => { void readUsage(); }, [readUsage]);

  const timer = useRef<ReturnType<typeof setTimeout>>();
  const reread = () => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => { void readUsage(); void readAnalytics(); }, LIVE_SETTLE_MS);
  };
  useEffect(() => () => clearTimeout(timer.current), []);
  useLiveEvents(['email.status'], reread, reread);

  const days = data?.days.map((d) => d.day) ?? [];
  const outcomes: Series[] = OUTCOMES.map((o) => ({ key: o.key, label: o.label, values: data?.days.map((d) => d.counts[o.key]) ?? [] }));
  const engagement: Series[] = [
    { key: 'opens', label: 'Opens', values: data?.days.map((d) => d.tracking.opens.human) ?? [] },
    { key: 'clicks', label: 'Clicks', values: data?.days.map((d) => d.tracking.clicks.human) ?? [] },
  ];
  const t = data?.totals;
  const tracked = data ? data.tracking.opens.human + data.tracking.opens.machine + data.tracking.clicks.human + data.tracking.clicks.machine > 0 : false;
  const rangeWords = data ? `${data.from} to ${data.to} (UTC)` : '';
  return (
    <Page title="Analytics" description="Outcomes per day (an email counts on the UTC day it was accepted, under its status now) and usage against the plan's limits.">
      <section aria-labelledby="usage-title" class="ix-card">
        <h2 id="usage-title">Usage now {usage?.plan ? <span class="ix-muted">· plan {usage.plan.name}</span> : null}</h2>
        {usage
          ? (
            <div class="ix-meters">
              <UsageMeter label="Hour" window="trailing hour" used={usage.hour.used} limit={usage.hour.limit} />
              <UsageMeter label="Day" window="trailing 24 hours" used={usage.day.used} limit={usage.day.limit} />
            </div>
          )
          : <p class="loading" role="status">Loading…</p>}
        {usage && !usage.plan && <p class="ix-muted">This project has no plan, so no limits apply.</p>}
      </section>

      <form class="ix-filters" aria-label="Range and filters" onSubmit={(e) => { e.preventDefault(); setFilters({ domain: domain.trim(), tag: tag.trim() }); }}>
        <Field label="Range" name="range">
          {(control) => (
            <select {...control} value={range} onChange={(e) => setRange(Number(e.currentTarget.value) as (typeof RANGES)[number])}>
              {RANGES.map((r) => <option value={r}>Last {r} days</option>)}
            </select>
          )}
        </Field>
        <Field label="From domain" name="domain" value={domain} placeholder="every domain" error={fields.domain} onInput={(e) => setDomain(e.currentTarget.value)} />
        <Field label="Tag" name="tag" value={tag} placeholder="every tag" error={fields.tag} onInput={(e) => setTag(e.currentTarget.value)} />
        <Button type="submit">Apply</Button>
      </form>
      <FormError message={error ?? (fields.from ?? fields.to)} />

      {data && t && (
        <>
          <dl class="ix-stats" aria-label="Totals">
            {OUTCOMES.map((o) => <div key={o.key}><dt>{o.label}</dt><dd data-testid={`total-${o.key}`}>{t[o.key].toLocaleString()}</dd></div>)}
            <div><dt>Bounce rate</dt><dd>{percent(data.rates.bounce_rate)}</dd></div>
            <div><dt>Complaint rate</dt><dd>{percent(data.rates.complaint_rate)}</dd></div>
          </dl>
          <section aria-labelledby="outcomes-title" class="ix-card">
            <div class="ix-card-head">
              <h2 id="outcomes-title">Daily outcomes</h2>
              <Button variant="ghost" aria-expanded={showTable} aria-controls="analytics-table" onClick={() => setShowTable(!showTable)}>
                {showTable ? 'Hide the numbers' : 'Show as a table'}
              </Button>
            </div>
            <StackedBars title="Daily outcomes" days={days} series={outcomes}
              summary={`${rangeWords}: ${OUTCOMES.map((o) => `${t[o.key]} ${o.label.toLowerCase()}`).join(', ')}.${peak(days, outcomes)}`} />
            {!OUTCOMES.some((o) => t[o.key]) && <p class="ix-muted">Nothing was sent in this range yet: send a message (Send) and it appears here within a moment.</p>}
          </section>
          <section aria-labelledby="engagement-title" class="ix-card">
            <h2 id="engagement-title">Opens and clicks</h2>
            {tracked
              ? <>
                <StackedBars title="Opens and clicks by people" days={days} series={engagement}
                  summary={`${rangeWords}: ${data.tracking.opens.human} opens and ${data.tracking.clicks.human} clicks by people; ${data.tracking.opens.machine} opens and ${data.tracking.clicks.machine} clicks by machines (privacy proxies, scanners) not charted.`} />
                <p class="ix-muted">Machine fetches left out of the chart: {data.tracking.opens.machine} opens, {data.tracking.clicks.machine} clicks.</p>
              </>
              : <p class="ix-muted">No opens or clicks recorded in this range. Tracking is off by default: turn it on for a domain (Domains) or per send.</p>}
          </section>
          {showTable && <DayTable data={data} />}
        </>
      )}
    </Page>
  );
}

function percent(rate: number | null): string {
  return rate === null ? '—' : `${(rate * 100).toFixed(2)} %`;
}

function peak(days: string[], series: Series[]): string {
  let best = -1;
  let at = 0;
  days.forEach((_, i) => {
    const sum = series.reduce((s, x) => s + (x.values[i] ?? 0), 0);
    if (sum > best) { best = sum; at = i; }
  });
  return best > 0 ? ` Busiest day ${days[at]} with ${best}.` : '';
}

function DayTable({ data }: { data: Analytics }) {
  return (
    <div class="table-wrap" id="analytics-table">
      <table class="table">
        <caption>Outcomes, opens and clicks per day, {data.from} to {data.to} (UTC)</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            {OUTCOMES.map((o) => <th scope="col" class="num">{o.label}</th>)}
            <th scope="col" class="num">Suppressed</th>
            <th scope="col" class="num">Opens</th>
            <th scope="col" class="num">Clicks</th>
          </tr>
        </thead>
        <tbody>
          {[...data.days].reverse().map((d) => (
            <tr key={d.day}>
              <th scope="row">{d.day}</th>
              {OUTCOMES.map((o) => <td class="num">{d.counts[o.key]}</td>)}
              <td class="num">{d.counts.suppressed}</td>
              <td class="num">{d.tracking.opens.human + d.tracking.opens.machine}</td>
              <td class="num">{d.tracking.clicks.human + d.tracking.clicks.machine}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
