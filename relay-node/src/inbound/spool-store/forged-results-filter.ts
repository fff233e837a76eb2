// RFC 8601 section 5: a border MTA must not let through an
// Authentication-Results field that claims to come from inside its own
// boundary (its authserv-id) when a sender wrote it. Ours is added when the
// message is forwarded; a sender's `Authentication-Results: <our host>;
// dkim=pass` would otherwise sit beside it in the stored raw message.
import { Transform, type TransformCallback } from 'node:stream';

/**
 * A transform that deletes every `Authentication-Results` header field whose
 * authserv-id is `authservId` (case-insensitive, comments and a trailing dot
 * ignored). Deleted, not renamed: a renamed copy still reads `<our host>;
 * dkim=pass` to a careless reader, and a message never grows by it. Fields
 * naming other hosts (an upstream receiver's results) stay; the body and every
 * other byte pass unchanged.
 *
 * Only the header block is held, scanned once byte by byte as it arrives (a
 * blank line ends it; a message that starts with one has no header). Past
 * `maxHeaderSize` bytes without its end, what is held passes unchanged: the
 * listener refuses such a header (552 5.3.4), and a body is never filtered.
 *
 * @example pipeline(message, dropForgedAuthResults('mx1.example.com', 262_144), spoolFile, done)
 */
export function dropForgedAuthResults(authservId: string, maxHeaderSize = 262_144): Transform {
  const ours = normalise(authservId);
  let header: Buffer[] = [];
  let held = 0;
  let passing = false;
  // Where the scan stands in the current line: at its start, after a CR at its start, or inside it.
  let line: 'start' | 'cr' | 'text' = 'start';
  const release = (self: Transform, block: Buffer) => self.push(Buffer.from(filterHeader(block.toString('latin1'), ours), 'latin1'));
  return new Transform({
    transform(this: Transform, chunk: Buffer, _encoding, done: TransformCallback) {
      if (passing) return done(null, chunk);
      // The blank line's LF (LF LF or LF CRLF, as mailauth reads it) ends the header.
      let end = -1;
      for (let i = 0; i < chunk.length && held + i < maxHeaderSize; i++) {
        const byte = chunk[i]!;
        if (byte === 0x0a) {
          if (line !== 'text') {
            end = i + 1;
            break;
          }
          line = 'start';
        } else line = byte === 0x0d && line === 'start' ? 'cr' : 'text';
      }
      if (end >= 0) {
        passing = true;
        release(this, Buffer.concat([...header, chunk.subarray(0, end)]));
        header = [];
        return done(null, chunk.subarray(end));
      }
      held += chunk.length;
      if (held < maxHeaderSize) {
        header.push(chunk);
        return done();
      }
      // No end within the limit: not a header we keep holding (the listener refuses it anyway).
      passing = true;
      for (const part of header) this.push(part);
      header = [];
      done(null, chunk);
    },
    flush(this: Transform, done: TransformCallback) {
      // A message that is all header (no blank line) is still a header.
      if (!passing && header.length) release(this, Buffer.concat(header));
      done();
    },
  });
}

/** The header block without the fields that claim `ours`; folded lines belong to the field above them. */
function filterHeader(block: string, ours: string): string {
  const fields: string[] = [];
  for (const line of block.split(/(?<=\n)/)) {
    if (/^[ \t]/.test(line) && fields.length) fields[fields.length - 1] += line;
    else fields.push(line);
  }
  return fields.filter((field) => !claims(field, ours)).join('');
}

function claims(field: string, ours: string): boolean {
  const name = /^([^:\s]+)[ \t]*:/.exec(field);
  return !!name && name[1]!.toLowerCase() === 'authentication-results' && authservIdOf(field.slice(name[0].length)) === ours;
}

/** RFC 8601 section 2.2: the first value of the field, after any comments; a quoted string or a token. */
export function authservIdOf(value: string): string {
  const text = stripComments(value.replace(/\r?\n/g, '')).trim();
  const quoted = /^"((?:[^"\\]|\\.)*)"/.exec(text);
  const id = quoted ? quoted[1]!.replace(/\\(.)/g, '$1') : (/^[^\s;]+/.exec(text)?.[0] ?? '');
  return normalise(id);
}

/** Removes RFC 5322 comments (nested, with quoted-pairs); quoted strings are left alone. */
function stripComments(text: string): string {
  let out = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && (depth > 0 || quoted)) {
      if (!depth) out += c + (text[i + 1] ?? '');
      i++;
      continue;
    }
    if (depth === 0 && c === '"') quoted = !quoted;
    if (!quoted && c === '(') depth++;
    else if (!quoted && c === ')' && depth > 0) {
      depth--;
      out += ' ';
    } else if (depth === 0) out += c;
  }
  return out;
}

function normalise(id: string): string {
  return id.trim().toLowerCase().replace(/\.$/, '');
}
