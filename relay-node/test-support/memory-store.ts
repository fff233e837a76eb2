// A `store` for listener tests: keeps messages in memory (the durable spool
// is tested on its own). It follows the store contract: read to the end,
// then wait for the verdicts, reject when the stream errors.
import type { Readable } from 'node:stream';
import type { IngestAuthentication } from '../src/inbound/mail-auth/verdicts.js';
import type { InboundEnvelope, StoreMessage } from '../src/inbound/listener/types.js';

export interface StoredMessage {
  envelope: InboundEnvelope;
  data: Buffer;
  verdicts: IngestAuthentication;
}

export interface MemoryStore {
  store: StoreMessage;
  messages: StoredMessage[];
  /** Streams that errored before their end (nothing was kept for them). */
  abandoned: Error[];
  /** While set, each store waits for it before resolving (to see that 250 waits for the store). */
  gate?: Promise<void>;
}

export function memoryStore(): MemoryStore {
  const state: MemoryStore = {
    messages: [],
    abandoned: [],
    store: async (message: Readable, envelope: InboundEnvelope) => {
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of message) chunks.push(chunk as Buffer);
      } catch (err) {
        state.abandoned.push(err as Error);
        throw err;
      }
      const verdicts = await envelope.authentication;
      await state.gate;
      state.messages.push({ envelope, data: Buffer.concat(chunks), verdicts });
    },
  };
  return state;
}
