// A DevTools protocol session on a runtime's inspector endpoint (the Worker's,
// through wrangler's proxy): request/answer calls, events ignored. Benchmarks
// profile the Worker with it.
import { WebSocket } from 'ws';

export interface DevtoolsSession {
  /** A call whose answer carries a result (`Profiler.stop`). */
  call(method: string, params?: object): Promise<unknown>;
  /** A call whose answer is empty: sent, not awaited. */
  tell(method: string, params?: object): void;
  close(): void;
}

export function devtools(endpoint: string): Promise<DevtoolsSession> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(endpoint);
    let next = 1000;
    const waiting = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void }>();
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { id?: number; method?: string; result?: unknown; error?: { message: string } };
      // wrangler's proxy echoes calls (id, method, params) and passes on only the answers that carry
      // a result: a call answered with nothing (`Profiler.start`) never resolves, so send it with `tell`.
      const w = msg.id === undefined || !('result' in msg || 'error' in msg) ? undefined : waiting.get(msg.id);
      if (!w) return;
      waiting.delete(msg.id!);
      if (msg.error) w.fail(new Error(msg.error.message)); else w.ok(msg.result);
    });
    ws.once('open', () => resolve({
      call: (method, params = {}) => new Promise((ok, fail) => {
        const id = next++;
        waiting.set(id, { ok, fail });
        ws.send(JSON.stringify({ id, method, params }));
      }),
      tell: (method, params = {}) => ws.send(JSON.stringify({ id: next++, method, params })),
      close: () => ws.close(),
    }));
    ws.once('error', reject);
  });
}
