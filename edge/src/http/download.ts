// Headers for downloads of stored mail: the bytes come from the Internet, so
// the names and types they carry are cleaned before they reach a header.
import { safeContentType } from '../contracts/media-type.js';

/**
 * `Content-Disposition: attachment` naming `filename` (RFC 6266): a plain
 * `filename` with everything outside printable ASCII replaced, and, when the
 * name needs it, `filename*` with the exact name in UTF-8 (RFC 8187, formerly
 * 5987). Control characters (CR and LF included), quotes and backslashes are
 * removed first; an empty name becomes `fallback`.
 *
 * @example contentDisposition('Übersicht "Q3".pdf', 'attachment-0')
 * // attachment; filename="_bersicht Q3.pdf"; filename*=UTF-8''%C3%9Cbersicht%20Q3.pdf
 */
export function contentDisposition(filename: string, fallback: string): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = filename.replace(/[\x00-\x1f\x7f"\\]/g, '').trim() || fallback;
  const ascii = cleaned.replace(/[^\x20-\x7e]/g, '_');
  if (ascii === cleaned) return `attachment; filename="${ascii}"`;
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRfc8187(cleaned)}`;
}

/** RFC 8187 `value-chars`: attr-char as is, everything else percent-encoded UTF-8. */
function encodeRfc8187(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Headers every download of stored mail carries: no sniffing, no rendering
 * as a page of this origin, no caching of private mail.
 */
export const downloadHeaders = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; sandbox",
  'Cache-Control': 'private, no-store',
} as const;

/** The answer to an attachment download: its stored bytes, its cleaned type and name. */
export function attachmentResponse(meta: { content_type: string; filename: string }, object: R2ObjectBody, idx: number): Response {
  return new Response(object.body, {
    status: 200,
    headers: {
      'Content-Type': safeContentType(meta.content_type),
      'Content-Disposition': contentDisposition(meta.filename, `attachment-${idx}`),
      'Content-Length': String(object.size),
      ...downloadHeaders,
    },
  });
}
