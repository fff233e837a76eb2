// The listener's `store` and `transforms`: the bytes go through the line-ending
// normaliser and the size limit into the spool (fsynced) with their metadata.
// The 250 is sent only after this resolves: "spool first, answer second,
// forward third".
import { pipeline, type Transform } from 'node:stream';
import type { Spool } from '../../spool/index.js';
import { createLineEndingNormalizer, createSizeLimit, type BareLineEndingMode } from '../hygiene/index.js';
import type { StoreMessage } from '../listener/types.js';
import type { Log } from '../../log.js';
import { dropForgedAuthResults } from './forged-results-filter.js';
import { spooledMeta, type SpooledMeta } from './spooled-message.js';

export interface SpoolStoreOptions {
  spool: Spool<SpooledMeta>;
  /** This node's host name, for the Received header. */
  hostName: string;
  log: Log;
  /** `inbound.max_header_size`: how much of a message is held as its header, at most. Default 262144. */
  maxHeaderSize?: number;
  /** Told each spooled id, so the forwarder starts on it at once. */
  onSpooled?: (id: string) => void;
}

/**
 * A `store` that writes the message and its metadata durably, without the
 * sender's Authentication-Results fields that claim this node's host name
 * (`dropForgedAuthResults`; ours goes in front when it is forwarded). The
 * metadata waits for the verdicts, which settle once the whole message has
 * been read; the spool awaits it only after the body is on disk, as the store
 * contract asks.
 *
 * @example createInboundServer({ store: createSpoolStore({ spool, hostName, log, onSpooled: forwarder.notify }), transforms, ... }, options)
 */
export function createSpoolStore(options: SpoolStoreOptions): StoreMessage {
  return async (message, envelope) => {
    const meta = envelope.authentication.then((verdicts) => spooledMeta(envelope, verdicts, options.hostName));
    // The verifier read the bytes as sent; what is kept loses any Authentication-Results claiming our name.
    const kept = pipeline(message, dropForgedAuthResults(options.hostName, options.maxHeaderSize), () => undefined);
    const { id, size } = await options.spool.write(kept, meta);
    options.log.debug?.('inbound message spooled', { id, session: envelope.sessionId, bytes: size, rcpt: envelope.rcptTo.length });
    options.onSpooled?.(id);
  };
}

/**
 * The per-message transforms before the spool: bare CR/LF normalised (or
 * refused, `554 5.5.0`), then a size cap on what is kept, so normalising can
 * never take a message past the size the edge is told to accept (`552 5.3.4`).
 */
export function ingestTransforms(mode: BareLineEndingMode, maxMessageSize: number): () => Transform[] {
  return () => [createLineEndingNormalizer(mode), createSizeLimit(maxMessageSize)];
}
