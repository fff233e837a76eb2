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
 * other byte pass unchanged. Only the header block is held, which the
 * listener's `max_header_size` already bounds.
 *
 * @example pipeline(message, dropForgedAuthResults('mx1.example.com'), spoolFile, done)
 */
export function dropForgedAuthResults(authservId: string): Transform {
  const ours = normalise(authservId);
  let header: Buffer[] = [];
  let held = 0;
  let inBody = false;
  const release = (self: Transform, block: Buffer) => self.push(Buffer.from(filterHeader(block.toString('latin1'), ours), 'latin1'));
  return new Transform({
    transform(this: Transform, chunk: Buffer, _encoding, done: TransformCallback) {
      if (inBody) return done(null, chunk);
      header.push(chunk);
      const scanFrom = Math.max(0, held - 3);
      held += chunk.length;
      const block = Buffer.concat(header);
      const end = headerEnd(block, scanFrom);
      if (end < 0) {
        header = [block];
        return done();
      }
      inBody = true;
      header = [];
      release(this, block.subarray(0, end));
      done(null, block.subarray(end));
    },
    flush(this: Transform, done: TransformCallback) {
      // A message that is all header (no blank line) is still a header.
      if (!inBody && header.length) release(this, Buffer.concat(header));
      done();
    },
  });
}

/** The offset just after the empty line that ends the header block (LF LF or LF CRLF, as mailauth reads it), or -1. */
function headerEnd(block: Buffer, from: number): number {
  const blank = /\n\r?\n/g;
  blank.lastIndex = from;
  const found = blank.exec(block.toString('latin1'));
  return found ? found.index + found[0].length : -1;
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
