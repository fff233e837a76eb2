// The event stream in the component tree: <LiveProvider> (inside the signed-in
// layout) holds one LiveStream per current project; pages listen with
// useLiveEvents().
import { createContext, type ComponentChildren } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { useSession } from '../session';
import { LiveStream, type LiveEvent, type LiveKind, type StreamStatus } from './stream';

interface LiveContextValue { stream: LiveStream | undefined; status: StreamStatus }
const LiveContext = createContext<LiveContextValue>({ stream: undefined, status: 'offline' });

export function LiveProvider({ projectId, children }: { projectId: string | null; children: ComponentChildren }) {
  const { refresh } = useSession();
  const [value, setValue] = useState<LiveContextValue>({ stream: undefined, status: 'offline' });
  useEffect(() => {
    if (!projectId) return undefined;
    const stream = new LiveStream({
      sessionAlive: async () => (await refresh()) !== null,
      onStatus: (status) => setValue((v) => (v.stream === stream && v.status === status ? v : { stream, status })),
    });
    setValue({ stream, status: 'connecting' });
    stream.start();
    return () => stream.stop();
  }, [projectId, refresh]);
  return <LiveContext.Provider value={value}>{children}</LiveContext.Provider>;
}

/**
 * Calls `onEvent` for each event of `kinds` in the current project, and
 * `onReset` when some may have been missed (re-read the list then). The
 * handlers may change between renders; the subscription stays.
 *
 * @example
 * useLiveEvents(['email.status'], (e) => updateRow(e.data.id, e.data.status), () => reload());
 */
export function useLiveEvents(kinds: readonly LiveKind[], onEvent: (event: LiveEvent) => void, onReset: () => void): void {
  const { stream } = useContext(LiveContext);
  const handlers = useRef({ onEvent, onReset });
  handlers.current = { onEvent, onReset };
  const key = kinds.join(',');
  useEffect(() => {
    if (!stream) return undefined;
    return stream.subscribe({
      kinds,
      onEvent: (e) => handlers.current.onEvent(e),
      onReset: () => handlers.current.onReset(),
    });
  }, [stream, key]);
}

/** 'live', 'connecting' or 'offline': for the indicator in the layout. */
export function useLiveStatus(): StreamStatus {
  return useContext(LiveContext).status;
}
