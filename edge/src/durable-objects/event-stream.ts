// The console's live event stream for one project (`idFromName(projectId)`).
// Publishers hand it committed events (outbox rows after the response and from
// the cron sweep, audit events once written, webhook attempts once recorded);
// it numbers them 1, 2, 3, … in the order they arrive, keeps the recent ones in
// its SQLite storage for resuming, and writes them to every open stream as
// Server-Sent Events. Streams are plain HTTP responses held open by this
// object, so one object serves every browser tab of the project; each stream's
// session is re-checked on a timer and the stream ended once it is not live.
import { DurableObject } from 'cloudflare:workers';
import { connect } from '../db/client.js';
import { settingsOf } from '../settings.js';
import { markStreamed, outboxStreamEvents } from '../services/event-stream/outbox-events.js';
import { liveSessions } from '../services/event-stream/live-sessions.js';
import { visibleEventNames } from '../services/event-stream/events.js';
import { sseComment, sseEvent, sseRetry } from '../services/event-stream/sse.js';
import { MAX_STREAMS, MAX_STREAMS_PER_SESSION, RETAIN_EVENTS, RETAIN_MS } from '../services/event-stream/limits.js';
import { Coalescer } from './coalescer.js';
import type { Bindings, EventStreamRpc, StreamEventInput } from '../env.js';

/** A stream with nothing written this long gets a comment, so proxies keep it open. */
const PING_MS = 15_000;
/** What EventSource waits before reconnecting after the stream ends. */
const RETRY_MS = 2_000;
/** A stream whose reader is this far behind is ended; it resumes by Last-Event-ID when it reconnects. */
const MAX_UNREAD_BYTES = 1 << 20;

interface Listener {
  sessionId: string;
  /** The kinds this member may see; re-read at each session check. */
  names: Set<string>;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  unread: number;
  lastWriteAt: number;
  ended: boolean;
}

/** A hand-over waiting for the next append: outbox ids to read, or events already built. */
type Published = { outboxIds: number[] } | { events: StreamEventInput[] };

const json = (status: number, error: string) =>
  new Response(JSON.stringify({ error }), { status, headers: { 'content-type': 'application/json' } });

export class EventStream extends DurableObject<Bindings> implements EventStreamRpc {
  private readonly sql: SqlStorage;
  private projectId: string | undefined;
  private readonly listeners = new Set<Listener>();
  private checkTimer: ReturnType<typeof setInterval> | undefined;
  private checking = false;

  // One append at a time, in arrival order; hand-overs arriving during an
  // outbox read share the next one.
  private readonly appends = new Coalescer<Published>(async (items) => {
    if (!this.recording()) return this.markGap();
    const outboxIds = items.flatMap((i) => ('outboxIds' in i ? i.outboxIds : []));
    const read = outboxIds.length ? await outboxStreamEvents(this.db, this.projectId!, outboxIds) : [];
    const bySource = new Map(read.map((e) => [e.source, e]));
    const ordered = items.flatMap((i) => ('events' in i ? i.events : i.outboxIds.flatMap((id) => bySource.get(`outbox:${id}`) ?? [])));
    this.broadcast(this.append(ordered));
  });

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec('create table if not exists events (id integer primary key, source text not null unique, name text not null, payload text not null, stored_at integer not null)');
    this.sql.exec('create table if not exists meta (key text primary key, value text not null)');
    this.projectId = this.meta('project_id') ?? undefined;
  }

  private get db() {
    const { config } = settingsOf(this.env);
    return connect(config['database.url'], this.env.LOCAL_NEON_BRIDGE);
  }

  /**
   * Appends the rows, then marks them streamed (`outbox.streamed_at`): never
   * before the stream holds them (or passed them unkept while nobody records,
   * when nobody could be shown them). A failure before the mark leaves them to
   * the cron sweep, which hands them over again; a repeat is dropped by source.
   * The mark runs outside the append queue, so it never delays the next append.
   */
  async publishOutbox(projectId: string, outboxIds: number[]): Promise<void> {
    this.remember(projectId);
    await this.appends.add([{ outboxIds }]);
    await markStreamed(this.db, projectId, outboxIds);
  }

  async publish(projectId: string, events: StreamEventInput[]): Promise<void> {
    this.remember(projectId);
    await this.appends.add([{ events }]);
  }

  /**
   * Opens a stream (the Worker's `GET /app/api/events`, which has checked the
   * session and its membership): `project`, `session`, `names` (the event kinds
   * this member may see) and `after` (the resume position, when given).
   */
  override async fetch(request: Request): Promise<Response> {
    const params = new URL(request.url).searchParams;
    const projectId = params.get('project');
    const sessionId = params.get('session');
    if (!projectId || !sessionId) return json(400, 'project and session required');
    this.remember(projectId);
    // A browser that left is noticed only at the next write to its stream: a
    // session at its cap most likely holds such a stream, so its oldest one goes.
    const own = [...this.listeners].filter((l) => l.sessionId === sessionId);
    if (own.length >= MAX_STREAMS_PER_SESSION) this.end(own[0]!, `replaced by a newer stream of this session (at most ${MAX_STREAMS_PER_SESSION})`);
    if (this.listeners.size >= MAX_STREAMS) return json(429, `too many open event streams in this project (at most ${MAX_STREAMS})`);

    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const listener: Listener = {
      sessionId, names: new Set((params.get('names') ?? '').split(',').filter(Boolean)),
      writer: writable.getWriter(), unread: 0, lastWriteAt: Date.now(), ended: false,
    };
    // The browser leaving cancels the body: the writer's `closed` rejects, and the stream is dropped at once.
    listener.writer.closed.catch(() => this.end(listener, null));
    this.write(listener, sseRetry(RETRY_MS));
    const after = params.get('after');
    // No await from here to `add`: nothing can be appended between the replay and the listener joining.
    if (after !== null) this.replay(listener, Number(after));
    else this.write(listener, sseComment(`following from event ${this.seq()}`));
    this.listeners.add(listener);
    this.keepRecording();
    this.startChecks();
    return new Response(readable, {
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
    });
  }

  private remember(projectId: string) {
    if (this.projectId === projectId) return;
    if (this.projectId) throw new Error(`event stream of project ${this.projectId} called for project ${projectId}`);
    this.projectId = projectId;
    this.setMeta('project_id', projectId);
  }

  private meta(key: string): string | null {
    const rows = this.sql.exec<{ value: string }>('select value from meta where key = ?', key).toArray();
    return rows[0]?.value ?? null;
  }

  private setMeta(key: string, value: string | number) {
    this.sql.exec('insert into meta (key, value) values (?, ?) on conflict (key) do update set value = excluded.value', key, String(value));
  }

  /** The id of the last event numbered (0 before the first). */
  private seq(): number {
    return Number(this.meta('seq') ?? 0);
  }

  /**
   * Whether events are being kept: while a stream is open, and for the
   * retention period after the last one closed (a browser resuming within it
   * finds what it missed). Otherwise nobody can resume, and nothing is read or
   * stored for the project.
   */
  private recording(): boolean {
    return this.listeners.size > 0 || Date.now() < Number(this.meta('recording_until') ?? 0);
  }

  /**
   * Moves the end of recording to a retention period from now (stored, at most
   * once a minute): set while streams are open, so events are kept even when
   * this object restarts under them and its streams reconnect later.
   */
  private keepRecording() {
    const until = Date.now() + RETAIN_MS;
    if (until - Number(this.meta('recording_until') ?? 0) > 60_000) this.setMeta('recording_until', until);
  }

  /**
   * Not recording: events pass unkept. The numbering skips one id (once per
   * quiet period), so a later resume from before it sees the hole and resets.
   */
  private markGap() {
    const seq = this.seq();
    if (this.meta('gap_at') === String(seq)) return;
    this.sql.exec('delete from events');
    this.setMeta('seq', seq + 1);
    this.setMeta('gap_at', seq + 1);
  }

  /** Numbers and stores new events (a source seen before is dropped: the sweep may hand a row over twice). */
  private append(events: StreamEventInput[]): { id: number; name: string; payload: string }[] {
    let seq = this.seq();
    const now = Date.now();
    const appended: { id: number; name: string; payload: string }[] = [];
    for (const e of events) {
      if (this.sql.exec('select 1 from events where source = ?', e.source).toArray().length) continue;
      seq += 1;
      this.sql.exec('insert into events (id, source, name, payload, stored_at) values (?, ?, ?, ?, ?)', seq, e.source, e.name, e.payload, now);
      appended.push({ id: seq, name: e.name, payload: e.payload });
    }
    if (!appended.length) return appended;
    this.setMeta('seq', seq);
    this.sql.exec('delete from events where id <= ? or stored_at < ?', seq - RETAIN_EVENTS, now - RETAIN_MS);
    return appended;
  }

  private broadcast(events: { id: number; name: string; payload: string }[]) {
    for (const l of this.listeners) {
      for (const e of events) if (l.names.has(e.name)) this.write(l, sseEvent(e.id, e.name, e.payload));
    }
  }

  /**
   * Writes what the client missed after `after`, or a `reset` event when that
   * is no longer whole (pruned, not recorded, or an id this stream never gave).
   */
  private replay(l: Listener, after: number) {
    const seq = this.seq();
    const kept = after <= seq ? this.sql.exec<{ n: number }>('select count(*) as n from events where id > ?', after).one().n : -1;
    if (kept !== seq - after) {
      this.write(l, sseEvent(seq, 'reset', JSON.stringify({
        reason: `events after ${after} are no longer kept (the stream keeps the last ${RETAIN_EVENTS} events, at most 24 hours): reload, then follow from here`,
        last_event_id: seq,
      })));
      return;
    }
    for (const e of this.sql.exec<{ id: number; name: string; payload: string }>('select id, name, payload from events where id > ? order by id', after)) {
      if (l.names.has(e.name)) this.write(l, sseEvent(e.id, e.name, e.payload));
    }
  }

  private write(l: Listener, bytes: Uint8Array) {
    if (l.ended) return;
    if (l.unread > MAX_UNREAD_BYTES) return this.end(l, null);
    l.unread += bytes.byteLength;
    l.lastWriteAt = Date.now();
    l.writer.write(bytes).then(() => { l.unread -= bytes.byteLength; }, () => this.end(l, null));
  }

  /** Ends a stream: with an `end` event saying why, or silently (the client is gone or too slow). */
  private end(l: Listener, reason: string | null) {
    if (l.ended) return;
    if (reason) this.write(l, sseEvent(null, 'end', JSON.stringify({ reason })));
    l.ended = true;
    this.listeners.delete(l);
    if (reason) l.writer.close().catch(() => {});
    else l.writer.abort().catch(() => {});
    if (!this.listeners.size) {
      this.keepRecording();
      if (this.checkTimer !== undefined) clearInterval(this.checkTimer);
      this.checkTimer = undefined;
    }
  }

  /**
   * Sets the kinds a stream is sent to `names` (the member's role or group
   * changed); false when none is left and the stream was ended.
   */
  private follow(l: Listener, names: string[]): boolean {
    if (names.length === l.names.size && names.every((n) => l.names.has(n))) return true;
    if (!names.length && l.names.size) {
      this.end(l, 'your role or group in this project no longer lets you see any of its events');
      return false;
    }
    l.names = new Set(names);
    this.write(l, sseComment(`now following ${names.join(', ')} (role or group changed)`));
    return true;
  }

  private startChecks() {
    if (this.checkTimer) return;
    const { config } = settingsOf(this.env);
    this.checkTimer = setInterval(() => void this.checkSessions(), config['console.events_session_check']);
  }

  /**
   * Every `console.events_session_check`: one query for every open stream's
   * session; a stream whose session was signed out, expired, or whose user left
   * the project is ended. A live one follows its member's current role and
   * group: the kinds it is sent are narrowed (or widened) to what they may see
   * now, so a demoted admin gets no further `audit` event; one left with no kind
   * at all is ended. A failed check ends every stream too (fail closed):
   * browsers reconnect, are authenticated afresh and resume by Last-Event-ID.
   */
  private async checkSessions() {
    if (this.checking || !this.listeners.size) return;
    this.checking = true;
    const open = [...this.listeners];
    try {
      const { config } = settingsOf(this.env);
      const live = await liveSessions(this.db, this.projectId!, [...new Set(open.map((l) => l.sessionId))], config['console.session_idle_timeout']);
      const now = Date.now();
      this.keepRecording();
      for (const l of open) {
        const membership = live.get(l.sessionId);
        if (!membership) {
          this.end(l, 'session ended: signed out, expired, or no longer a member of this project');
          continue;
        }
        if (!this.follow(l, visibleEventNames(membership))) continue;
        if (now - l.lastWriteAt >= PING_MS) this.write(l, sseComment('ping'));
      }
    } catch (e) {
      console.error(`event stream of project ${this.projectId}: session check failed, ending ${open.length} streams: ${e instanceof Error ? e.message : String(e)}`);
      for (const l of open) this.end(l, 'the session could not be re-checked: reconnect');
    } finally {
      this.checking = false;
    }
  }
}
