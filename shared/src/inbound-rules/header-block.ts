// A message's header block as the routing rules read it (names in lower case,
// values unfolded, every value of a repeated header): the relay node reads it
// at DATA, the rule test route from a raw message.

/**
 * The header fields of `block` up to its first empty line. Encoded words
 * (RFC 2047) are left as written: the caller decodes them where it matches
 * decoded text.
 *
 * @example parseHeaderBlock('Subject: Hello\r\n  world\r\nX-Tag: a\r\nx-tag: b\r\n\r\n') // { subject: 'Hello world', 'x-tag': ['a', 'b'] }
 */
export function parseHeaderBlock(block: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  // Only the header block is split: a capture may hold much of the body after it.
  const end = block.search(/\r?\n\r?\n/);
  const lines = (end < 0 ? block : block.slice(0, end)).split(/\r?\n/);
  const fields: string[] = [];
  for (const line of lines) {
    if (line === '') break;
    if (/^[ \t]/.test(line) && fields.length) fields[fields.length - 1] += ` ${line.trim()}`;
    else fields.push(line);
  }
  for (const f of fields) {
    const colon = f.indexOf(':');
    if (colon <= 0) continue;
    const name = f.slice(0, colon).trim().toLowerCase();
    const value = f.slice(colon + 1).trim();
    const prev = out[name];
    out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}
