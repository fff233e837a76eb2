// The node parses MIME (docs/relay-protocol.md): subject, bodies, headers and
// attachments go to the edge beside the raw bytes, so the Worker never runs a
// MIME parser on a 25 MiB message inside its 128 MB isolate.
import { Readable } from 'node:stream';
import libmime from 'libmime';
import type { HeaderLines } from 'mailparser';
import type { ForwardAttachment } from '../edge-client.js';
import type { ParsedMeta } from '../protocol.js';
import { readMime } from './read-mime.js';

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
  return { parsed: { ok: false, error: clip(error, 1000), message_id: '', subject: '', text: '', html: '', headers: {}, attachments: [] }, attachments: [] };
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
    const attachments = mail.attachments.map((a) => ({
      content: a.content,
      contentType: clip(a.contentType || 'application/octet-stream', 255),
      filename: clip(a.filename ?? '', 1000),
    }));
    const { headers, repeated } = headerValues(mail.headerLines);
    return {
      parsed: {
        ok: true,
        error: null,
        message_id: clip(mail.messageId, 998),
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
 * The edge refuses a `meta` whose fields pass its limits (RFC 5322's 998-octet
 * line for a Message-ID, 255 for a content type), and a refusal is permanent:
 * cut instead, so an odd message still lands.
 */
function clip(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}

/**
 * Each top-level header's values, unfolded, raw 8-bit bytes read as UTF-8 (as
 * mailparser does), RFC 2047 encoded words decoded. `headers`: name (lower
 * case) → its first value, as an edge of any version stores it. `repeated`:
 * name → all its values in the message's order (the top one first), for the
 * names that occur more than once (two `Received`, two `X-Tag`); a newer edge
 * stores those as arrays, an older one ignores the key.
 */
export function headerValues(lines: HeaderLines): { headers: Record<string, string>; repeated: Record<string, string[]> } {
  const all = new Map<string, string[]>();
  for (const { key, line } of lines) {
    const values = all.get(key) ?? [];
    values.push(decodedValue(line));
    all.set(key, values);
  }
  const headers: Record<string, string> = {};
  const repeated: Record<string, string[]> = {};
  for (const [key, values] of all) {
    headers[key] = values[0]!;
    if (values.length > 1) repeated[key] = values;
  }
  return { headers, repeated };
}

/** One header line's value (after the colon), unfolded and decoded. */
function decodedValue(line: string): string {
  const colon = line.indexOf(':');
  const raw = (colon < 0 ? '' : line.slice(colon + 1)).replace(/\r?\n(?=[ \t])/g, '').trim();
  const text = Buffer.from(raw, 'binary').toString('utf8');
  try {
    return libmime.decodeWords(text);
  } catch {
    return text; // a malformed encoded word stays as it came
  }
}

/** A Readable over a Blob (the message as forwarded), for the parser. */
export function blobReadable(blob: Blob): Readable {
  return Readable.fromWeb(blob.stream() as import('node:stream/web').ReadableStream<Uint8Array>);
}
