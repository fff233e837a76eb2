// Opening a console event stream: the request is handed to the project's
// EventStream object, whose response is the stream itself.
import type { Bindings } from '../../env.js';
import { eventStreamOf } from './publish.js';
import type { StreamEventName } from './events.js';

export interface StreamRequest {
  projectId: string;
  /** The session whose liveness the stream re-checks. */
  sessionId: string;
  /** The kinds this member may see (`visibleEventNames`). */
  names: StreamEventName[];
  /** The resume position (Last-Event-ID); undefined follows from now. */
  after: number | undefined;
}

export function openEventStream(env: Bindings, r: StreamRequest): Promise<Response> {
  const params = new URLSearchParams({ project: r.projectId, session: r.sessionId, names: r.names.join(',') });
  if (r.after !== undefined) params.set('after', String(r.after));
  return eventStreamOf(env, r.projectId).fetch(`https://event-stream.internal/open?${params}`);
}
