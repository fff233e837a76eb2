// A message's top-level headers as the edge takes them: read once by the
// inbound forwarder (parsed parts beside the raw bytes) and by the submission
// listener (the send's custom headers).
import libmime from 'libmime';
import type { HeaderLines } from 'mailparser';

/** The longest header name the edge stores (RFC 5322's line, shared/src/relay-protocol/inbound-meta.ts). */
export const HEADER_NAME_MAX = 998;

/**
 * Each top-level header's values, unfolded, raw 8-bit bytes read as UTF-8 (as
 * mailparser does), RFC 2047 encoded words decoded. `headers`: name (lower
 * case) → its first value, as an edge of any version stores it. `repeated`:
 * name → all its values in the message's order (the top one first), for the
 * names that occur more than once (two `Received`, two `X-Tag`); a newer edge
 * stores those as arrays, an older one ignores the key. A name over 998
 * characters (RFC 5322's line) is left out: the edge refuses it, and cut it
 * could pass for another header; the raw message keeps it.
 */
export function headerValues(lines: HeaderLines): { headers: Record<string, string>; repeated: Record<string, string[]> } {
  const all = new Map<string, string[]>();
  for (const { key, line } of lines) {
    if (key.length > HEADER_NAME_MAX) continue;
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
