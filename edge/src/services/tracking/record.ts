// Recording opens and clicks (docs/tracking.md, "Recording"): the endpoints
// answer at once and hand the event here; an isolate gathers what arrives
// within `BATCH_MS` and writes it in ONE statement (the daily counts and one
// outbox row per event, `email.opened` / `email.clicked`), then hands the
// outbox rows to webhooks and the console stream. So a burst of a thousand
// clicks is a handful of statements, and no request waits on the database.
// An isolate that dies inside the window loses that window's events: they
// are engagement signals, not mail, and the redirect itself never depends on them.
import { sql } from 'drizzle-orm';
import { emails, outbox, outboundMessages, trackingDailyCounts } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { Bindings } from '../../env.js';
import { emailEventData, eventsByProject } from '../emails/events.js';
import { handOverOutbox } from '../webhook-outbox/hand-over.js';
import { handedOverUnlessSubscribed } from '../webhooks/subscribed.js';
import type { MachineReason, UserAgentClass } from './classify.js';
import type { TrackingKind } from './token.js';

export interface TrackingEvent {
  kind: TrackingKind;
  emailId: string;
  /** Clicks: the link's index among the message's tracked links, and its URL. */
  linkIndex: number | null;
  url: string | null;
  machine: boolean;
  machineReason: MachineReason | null;
  userAgentClass: UserAgentClass;
  at: Date;
}

/** How long an isolate gathers events before writing them; and at most this many in one statement. */
export const BATCH_MS = 200;
export const BATCH_MAX = 500;

type Row = { events: { id: number; project_id: string; settled: boolean }[] | null };

/**
 * Writes events in one statement. An email that no longer exists (deleted
 * with its project) records nothing. Answers the outbox rows by project.
 */
export async function recordTrackingEvents(db: Db, events: TrackingEvent[]) {
  const input = events.map((e, i) => ({
    i, email_id: e.emailId, kind: e.kind, link_index: e.linkIndex, url: e.url, machine: e.machine,
    machine_reason: e.machineReason, user_agent_class: e.userAgentClass, at: e.at.toISOString(),
  }));
  const { rows: [row] } = await db.execute<Row>(sql`
    with input as (
      select * from jsonb_to_recordset(${JSON.stringify(input)}::jsonb) as r(
        i int, email_id uuid, kind text, link_index int, url text, machine boolean, machine_reason text, user_agent_class text, at timestamptz)
    ),
    found as (
      select r.*, e.project_id, e.recipient, e.status, e.attempts, m."from", m.subject, m.tags
      from input r join ${emails} e on e.id = r.email_id join ${outboundMessages} m on m.id = e.message_id
    ),
    counted as (
      insert into ${trackingDailyCounts} (project_id, day, from_domain, tag, kind, machine, count)
      select f.project_id, (f.at at time zone 'UTC')::date, email_daily_counts_from_domain(f."from"), t.tag, f.kind, f.machine, count(*)
      from found f cross join lateral (select distinct x as tag from unnest(array[''] || f.tags) x) t
      group by 1, 2, 3, 4, 5, 6
      order by 1, 2, 3, 4, 5, 6
      on conflict (project_id, day, from_domain, tag, kind, machine)
        do update set count = ${trackingDailyCounts}.count + excluded.count
    ),
    events as (
      -- As every email event: a row no webhook of the project subscribes to is born handed over (the console stream still gets it).
      insert into ${outbox} (project_id, event, data, created_at, handed_over_at)
      select f.project_id, 'email.' || case f.kind when 'open' then 'opened' else 'clicked' end,
        ${emailEventData({
          id: sql`f.email_id`, projectId: sql`f.project_id`, from: sql`f."from"`, recipient: sql`f.recipient`, subject: sql`f.subject`,
          status: sql`f.status`, attempts: sql`f.attempts`, errorMessage: sql`null`,
        })} || jsonb_build_object('tracking', jsonb_build_object(
          'at', to_char(f.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'user_agent_class', f.user_agent_class, 'machine', f.machine, 'machine_reason', f.machine_reason)
          || case when f.kind = 'click' then jsonb_build_object('link', jsonb_build_object('url', f.url, 'index', f.link_index)) else '{}'::jsonb end),
        f.at,
        ${handedOverUnlessSubscribed(sql`f.project_id`, sql`'email.' || case f.kind when 'open' then 'opened' else 'clicked' end`)}
      from found f
      order by f.i
      returning id, project_id, handed_over_at
    )
    select (select json_agg(json_build_object('id', id, 'project_id', project_id, 'settled', handed_over_at is not null)) from events) as events`);
  return eventsByProject(row?.events ?? []);
}

// The isolate's batch: events waiting, and the write that will take them.
let waiting: TrackingEvent[] = [];
let scheduled: Promise<void> | null = null;

/**
 * Queues one event; the first event of a window schedules the write and
 * keeps the request that brought it alive until then (`waitUntil`), so the
 * later ones need not. A full batch is written at once.
 */
export function queueTrackingEvent(env: Bindings, db: Db, waitUntil: (p: Promise<unknown>) => void, event: TrackingEvent): void {
  waiting.push(event);
  if (waiting.length >= BATCH_MAX) {
    waitUntil(flush(env, db));
    return;
  }
  if (scheduled) return;
  scheduled = new Promise<void>((resolve) => setTimeout(resolve, BATCH_MS)).then(() => flush(env, db));
  waitUntil(scheduled);
}

async function flush(env: Bindings, db: Db): Promise<void> {
  const batch = waiting;
  waiting = [];
  scheduled = null;
  if (!batch.length) return;
  try {
    const byProject = await recordTrackingEvents(db, batch);
    await Promise.all([...byProject].map(([projectId, rows]) => handOverOutbox(env, projectId, rows)));
  } catch (e) {
    console.error(`tracking: ${batch.length} events not recorded: ${e instanceof Error ? e.message : String(e)}`);
  }
}
