// The message size and header size caps, applied while the data streams in.
import type { Readable, Writable } from 'node:stream';
import { countBytes } from './byte-count.js';
import { smtpReply, type SmtpReplyError } from './smtp-reply.js';

export interface MessageLimits {
  /** `inbound.max_message_size`, bytes of data after dot-unstuffing. */
  maxMessageSize: number;
  /** `inbound.max_header_size`, bytes up to and including the blank line. */
  maxHeaderSize: number;
}

/** smtp-server's data stream: a Readable that says when its `size` option was exceeded. */
export type SmtpDataStream = Readable & { sizeExceeded?: boolean };

/** How the data ended. */
export interface GuardOutcome {
  /** A cap was crossed: the reply to give once the data has ended. */
  refusal: SmtpReplyError | null;
  /** The data never reached its final dot (the client went away). */
  aborted: boolean;
}

/**
 * Copies the SMTP data stream into `out` until a cap is crossed, and reads
 * the stream to its end whatever happens: smtp-server replies to DATA only
 * after the final dot, and the client is still sending. Crossing a cap (or the
 * client leaving) destroys `out` with the reason, so a partial message is
 * never stored; if `out`'s reader gives up first, the rest is read and dropped.
 * Only one chunk is ever held here: `out`'s back-pressure pauses the source.
 *
 * @returns resolves once the data has ended, with the refusal if any
 */
export function guardMessage(source: SmtpDataStream, out: Writable, limits: MessageLimits): Promise<GuardOutcome> {
  return new Promise((resolve) => {
    let refusal: SmtpReplyError | null = null;
    const size = countBytes(limits.maxMessageSize);
    let settled = false;
    const headerWithin = headerScanner(limits.maxHeaderSize);
    const refuse = (reply: SmtpReplyError) => {
      refusal = reply;
      if (!out.destroyed) out.destroy(reply);
      source.resume(); // it may be paused for back-pressure; from here on, read and drop
    };
    const settle = (aborted: boolean) => {
      if (settled) return;
      settled = true;
      if (aborted && !out.destroyed) out.destroy(new Error('the client left before the end of the message'));
      resolve({ refusal, aborted });
    };

    source.on('data', (chunk: Buffer) => {
      if (refusal || out.destroyed) return;
      if (!size.add(chunk.length) || source.sizeExceeded) {
        return refuse(smtpReply(552, `5.3.4 Message exceeds the fixed maximum message size of ${limits.maxMessageSize} bytes`));
      }
      if (!headerWithin(chunk)) {
        return refuse(smtpReply(552, `5.3.4 Message header exceeds the maximum header size of ${limits.maxHeaderSize} bytes`));
      }
      if (!out.write(chunk)) {
        source.pause();
        const resume = () => {
          out.off('drain', resume);
          out.off('close', resume);
          source.resume();
        };
        out.on('drain', resume);
        out.on('close', resume);
      }
    });
    source.on('end', () => {
      if (!refusal && !out.destroyed) out.end();
      settle(false);
    });
    // smtp-server destroys the stream (with an error when someone listens) when the client leaves mid-message.
    source.on('error', () => settle(true));
    source.on('close', () => settle(!source.readableEnded));
  });
}

/**
 * Follows the header block across chunks: false once more than `max` bytes
 * have gone by without the blank line that ends it (CRLF CRLF, or bare LF LF,
 * which a later normaliser turns into the same). Stops looking after the end.
 */
function headerScanner(max: number): (chunk: Buffer) => boolean {
  let seen = 0;
  let done = false;
  let lineEmpty = true; // a message may start with the blank line (no header at all)
  return (chunk) => {
    if (done) return true;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (++seen > max) return false;
      if (byte === 0x0a) {
        if (lineEmpty) {
          done = true;
          return true;
        }
        lineEmpty = true;
      } else if (byte !== 0x0d) {
        lineEmpty = false;
      }
    }
    return true;
  };
}
