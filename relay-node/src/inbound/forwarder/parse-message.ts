// The node parses MIME (docs/relay-protocol.md): subject, bodies, headers and
// attachments go to the edge beside the raw bytes, so the Worker never runs a
// MIME parser on a 25 MiB message inside its 128 MB isolate.
import { Readable } from 'node:stream';
import type { ForwardAttachment } from '../../edge/client.js';
import type { ParsedMeta } from '@edgemail/shared';
import { readMime } from './read-mime.js';
import { HEADER_NAME_MAX, headerValues } from '../../smtp/header-values.js';

export interface ParsedMessage {
  parsed: ParsedMeta;
  /** The attachments' bytes, in `parsed.attachments` order (one message's worth in memory). */
  attachments: ForwardAttachment[];
}

export interface ParseOptions {
  /** A message whose parsing takes longer is sent as unparsed (`ok: false`). Default 60000 ms. */
  timeoutMs?: number;
}

/**
 * A message forwarded without its parsed parts (`ok: false`): stored as
 * `failed` with `error` as its `status_reason`, its raw bytes kept.
 */
export function unparsed(error: string): ParsedMessage {
  return { parsed: { ok: false, error: clip(error, EDGE_LIMITS.error), message_id: '', subject: '', text: '', html: '', headers: {}, attachments: [] }, attachments: [] };
}

/**
 * Parses one message with mailparser. Never throws: a message mailparser
 * refuses (over 1,000 parts, a part header over 1 MB), or whose MIME tree
 * cannot be read as sent (a multipart without a boundary, or whose boundary
 * never occurs: `mimeDefect`), comes back as `ok: false` with the reason, and
 * is stored as `failed` with its raw bytes by the edge.
 *
 * `text` is the text/plain part and `html` the text/html part, each empty
 * when absent (no conversion from one to the other); `cid:` links are left
 * as they are; `headers` holds each top-level header's first value,
 * unfolded, with RFC 2047 words decoded, and `repeated_headers` every value,
 * in order, of each header that occurs more than once (`headerValues`).
 */
export async function parseMessage(input: Readable, options: ParseOptions = {}): Promise<ParsedMessage> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    const mail = await Promise.race([
      readMime(input, {
        skipHtmlToText: true,
        skipTextToHtml: true,
        skipImageLinks: true,
        checksumAlgo: false,
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`parsing took longer than ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    if (mail.defect) return unparsed(mail.defect);
    // The edge takes at most 1000; dropping some would store a record that lies about the message.
    if (mail.attachments.length > EDGE_LIMITS.attachments) return unparsed(`${mail.attachments.length} attachments, over the ${EDGE_LIMITS.attachments} a record holds`);
    const attachments = mail.attachments.map((a) => ({
      content: a.content,
      contentType: clip(a.contentType || 'application/octet-stream', EDGE_LIMITS.contentType),
      filename: clip(a.filename ?? '', EDGE_LIMITS.filename),
    }));
    const { headers, repeated } = headerValues(mail.headerLines);
    return {
      parsed: {
        ok: true,
        error: null,
        message_id: clip(mail.messageId, EDGE_LIMITS.messageId),
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        headers,
        repeated_headers: repeated,
        attachments: attachments.map((a) => ({ filename: a.filename, content_type: a.contentType, size: a.content.length })),
      },
      attachments,
    };
  } catch (err) {
    input.destroy();
    return unparsed((err as Error).message || String(err));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The edge refuses a `meta` whose fields pass its limits
 * (shared/src/relay-protocol/inbound-meta.ts: RFC 5322's 998-octet line for a
 * Message-ID or a header name, 255 for a content type), and a refusal is
 * permanent: cut instead, so an odd message still lands. Lengths are UTF-16
 * code units, as zod counts them; a cut never splits a surrogate pair.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** The edge's limits on the parsed parts (shared/src/relay-protocol/inbound-meta.ts). */
export const EDGE_LIMITS = { headerName: HEADER_NAME_MAX, messageId: 998, error: 1000, filename: 1000, contentType: 255, attachments: 1000 } as const;

/** A Readable over a Blob (the message as forwarded), for the parser. */
export function blobReadable(blob: Blob): Readable {
  return Readable.fromWeb(blob.stream() as import('node:stream/web').ReadableStream<Uint8Array>);
}
