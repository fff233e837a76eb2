// The subject and headers of a raw message given to the rule test route, read
// as ingest has them from the relay node: each field unfolded, encoded words
// (RFC 2047) decoded, a repeated header with every value.
import { decodeWords } from 'postal-mime';
import { parseHeaderBlock } from '@edgemail/shared';

export function readRawHeader(raw: string): { subject: string; headers: Record<string, string | string[]> } {
  const end = raw.search(/\r?\n\r?\n/);
  const fields = parseHeaderBlock(end === -1 ? raw : raw.slice(0, end));
  const headers = Object.fromEntries(Object.entries(fields).map(([name, value]) =>
    [name, Array.isArray(value) ? value.map((v) => decodeWords(v)) : decodeWords(value)]));
  const subject = headers.subject;
  return { subject: (Array.isArray(subject) ? subject[0] : subject) ?? '', headers };
}
