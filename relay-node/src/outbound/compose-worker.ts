// A compose worker thread (started by compose-pool.ts): composes and
// DKIM-signs claimed jobs off the main thread, which keeps the SMTP sessions
// and the edge's claims and reports moving. Keys are parsed once per thread
// (signing-key.ts).
import { readlinkSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { AddressRefusedError, composeSignedMessage } from './compose.js';
import type { ComposeFailure, FromComposeWorker, ToComposeWorker } from './compose-protocol.js';

if (!parentPort) throw new Error('compose-worker.ts runs as a worker thread (see compose-pool.ts)');
const port = parentPort;

/**
 * The bytes in an ArrayBuffer of their own, so it can be transferred: a small
 * Buffer may be a slice of Node's shared allocation pool, which transferring
 * would take away from every other Buffer in it.
 */
function ownBuffer(bytes: Buffer): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy;
}

function failureOf(err: unknown): ComposeFailure {
  if (err instanceof AddressRefusedError) return { kind: 'address', field: err.field, value: err.value };
  return { kind: 'other', message: err instanceof Error ? err.message : String(err) };
}

port.on('message', (message: ToComposeWorker) => {
  if (message.type !== 'compose') return;
  const { id } = message;
  composeSignedMessage(message.job, { signTime: new Date(message.signTime) }).then(
    (bytes) => {
      const own = ownBuffer(bytes);
      port.postMessage({ type: 'composed', id, bytes: own } satisfies FromComposeWorker, [own.buffer as ArrayBuffer]);
    },
    (err: unknown) => port.postMessage({ type: 'failed', id, failure: failureOf(err) } satisfies FromComposeWorker),
  );
});
/** This thread's id on Linux (`/proc/thread-self` is `<pid>/task/<tid>`), else null. */
function threadId(): number | null {
  try {
    return Number(/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1]) || null;
  } catch {
    return null;
  }
}

port.postMessage({ type: 'ready', tid: threadId() } satisfies FromComposeWorker);
