// One EventSource on /app/api/events for the session's current project
// (docs/console.md "Event stream"), shared by every page that listens.
//
// - The browser's own reconnect sends Last-Event-ID, so a short drop loses
//   nothing. When the browser gives up (a 5xx, a refused reconnect) or the
//   server ends the stream (`end`), we open it again after a back-off with
//   `?last_event_id=<the last id seen>`, once the session is known to be live.
// - `reset` (events passed that the stream no longer keeps) and a reopen with
//   no id to resume from tell every listener to re-read its list.

export type LiveKind = 'inbound.received' | 'email.status' | 'webhook.delivery' | 'audit';
export const LIVE_KINDS: readonly LiveKind[] = ['inbound.received', 'email.status', 'webhook.delivery', 'audit'];

/** One event as the stream sends it: `type` is the webhook/audit type (`email.sent`, `webhook.created`…). */
export interface LiveEvent<D = Record<string, unknown>> {
  kind: LiveKind;
  id: string;
  type: string;
  at: string;
  data: D;
}

export interface Listener {
  kinds: readonly LiveKind[];
  onEvent: (event: LiveEvent) => void;
  /** Events may have been missed: re-read what the page shows. */
  onReset: () => void;
}

export type StreamStatus = 'connecting' | 'live' | 'offline';

export interface StreamOptions {
  /** Asked before reopening after the server or browser closed the stream: false stops (signed out). */
  sessionAlive: () => Promise<boolean>;
  onStatus: (status: StreamStatus) => void;
  /** For tests and the bench: the URL of the stream. */
  url?: string;
}

export class LiveStream {
  private source: EventSource | undefined;
  private lastId: string | undefined;
  private readonly listeners = new Set<Listener>();
  private retry = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(private readonly options: StreamOptions) {}

  start(): void {
    this.open(false);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.source?.close();
    this.source = undefined;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private open(afterGap: boolean): void {
    if (this.stopped) return;
    const base = this.options.url ?? '/app/api/events';
    const url = this.lastId ? `${base}?last_event_id=${encodeURIComponent(this.lastId)}` : base;
    const source = new EventSource(url);
    this.source = source;
    this.options.onStatus('connecting');
    // Without an id to resume from, what happened while closed is unknown: re-read.
    let resetOnOpen = afterGap && !this.lastId;
    source.onopen = () => {
      this.retry = 0;
      this.options.onStatus('live');
      if (resetOnOpen) this.resetAll();
      resetOnOpen = false;
    };
    for (const kind of LIVE_KINDS) {
      source.addEventListener(kind, (e) => this.deliver(kind, e as MessageEvent<string>));
    }
    source.addEventListener('reset', (e) => {
      this.remember(e as MessageEvent<string>);
      this.resetAll();
    });
    source.addEventListener('end', () => this.reopenLater());
    source.onerror = () => {
      // CONNECTING: the browser retries by itself, with Last-Event-ID. CLOSED: it gave up.
      if (source.readyState === EventSource.CLOSED) this.reopenLater();
      else this.options.onStatus('connecting');
    };
  }

  private reopenLater(): void {
    this.source?.close();
    this.source = undefined;
    if (this.stopped) return;
    this.options.onStatus('offline');
    const delay = Math.min(30_000, 1000 * 2 ** this.retry++);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      void this.options.sessionAlive().then((alive) => {
        if (alive) this.open(true);
        else this.stop();
      }, () => this.reopenLater());
    }, delay);
  }

  private remember(e: MessageEvent<string>): void {
    if (e.lastEventId) this.lastId = e.lastEventId;
  }

  private deliver(kind: LiveKind, e: MessageEvent<string>): void {
    this.remember(e);
    let parsed: { type: string; at: string; data: Record<string, unknown> };
    try {
      parsed = JSON.parse(e.data);
    } catch {
      return;
    }
    const event: LiveEvent = { kind, id: e.lastEventId, type: parsed.type, at: parsed.at, data: parsed.data };
    for (const l of this.listeners) if (l.kinds.includes(kind)) l.onEvent(event);
  }

  private resetAll(): void {
    for (const l of this.listeners) l.onReset();
  }
}
