// Reads a request body as consecutive pieces of known length (the forwarded
// message's meta, raw bytes and attachments), so each piece can be handed on
// as it arrives instead of the whole body being held in the isolate.
import { incompleteBody } from '../errors.js';

/**
 * The body ended before a piece was complete: an upload cut short. 408, not
 * 400: the node keeps the message and sends it again (a 400 would be final).
 */
const truncated = (what: string, got: number, want: number) =>
  incompleteBody(`request body ended early: ${what}: ${got} of ${want} bytes arrived`);

export class ExactReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  /** Bytes read from the stream but not yet handed out (a chunk straddling two pieces). */
  #pending: Uint8Array | null = null;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  /** The next chunk of at most `max` bytes, or null at the end of the body. */
  async #next(max: number): Promise<Uint8Array | null> {
    let chunk = this.#pending;
    this.#pending = null;
    if (!chunk) {
      const { done, value } = await this.#reader.read();
      if (done) return null;
      chunk = value;
    }
    if (chunk.byteLength > max) {
      // The head is a copy: the one buffer must not be shared by the piece
      // handed on (a stream may take it over) and the rest kept here.
      this.#pending = chunk.subarray(max);
      return chunk.slice(0, max);
    }
    return chunk;
  }

  /** Exactly `n` bytes, held in memory: for the small meta only. */
  async read(n: number, what: string): Promise<Uint8Array> {
    const out = new Uint8Array(n);
    let got = 0;
    while (got < n) {
      const chunk = await this.#next(n - got);
      if (!chunk) throw truncated(what, got, n);
      out.set(chunk, got);
      got += chunk.byteLength;
    }
    return out;
  }

  /** Passes exactly `n` bytes into `writable` as they arrive, then closes it (aborts it on failure). */
  async pipe(n: number, writable: WritableStream<Uint8Array>, what: string): Promise<void> {
    const writer = writable.getWriter();
    let got = 0;
    try {
      while (got < n) {
        const chunk = await this.#next(n - got);
        if (!chunk) throw truncated(what, got, n);
        got += chunk.byteLength; // counted first: the write may take the buffer over
        await writer.write(chunk);
      }
      await writer.close();
    } catch (err) {
      await writer.abort(err).catch(() => undefined);
      throw err;
    }
  }

  /** Reads and drops the rest (an answer that needs none of it still lets the upload finish). */
  async drain(): Promise<void> {
    while (await this.#next(Number.MAX_SAFE_INTEGER)) { /* dropped */ }
  }
}
