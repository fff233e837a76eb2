// fast-check generators of hostile email messages, as bytes with CRLF line
// endings: header names and values with folded lines, encoded words in
// charsets that decode to nonsense (UTF-16 halves, unknown names), 8-bit
// bytes, NUL, long lines, broken and nested multiparts. Used by the MIME
// property tests of the node (parse-message.property.test.ts) and of the
// ingest path through a real node and edge (test/mime-ingest.property.test.ts).
import fc from 'fast-check';

export const latin1 = (s: string) => Buffer.from(s, 'latin1');
const ascii = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 16 });
const randomBytes = (max: number) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));
const CHARSETS = ['UTF-8', 'utf-16', 'UTF-16BE', 'UTF-16LE', 'UTF-32', 'ISO-8859-1', 'windows-1252', 'ISO-2022-JP', 'GB18030', 'Shift_JIS', 'utf-7', 'x-unknown-charset', ''];
const charset = fc.constantFrom(...CHARSETS);

/** An RFC 2047 encoded word, its payload random bytes in B or Q form (sometimes not even valid base64). */
const encodedWord = fc.tuple(charset, fc.constantFrom('B', 'Q', 'b', 'X'), randomBytes(9), fc.boolean()).map(([cs, enc, payload, broken]) => {
  const text = enc.toUpperCase() === 'B' ? payload.toString('base64') : [...payload].map((b) => `=${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');
  return latin1(`=?${cs}?${enc}?${broken ? text.slice(1) : text}?=`);
});

/** Pieces of header values and body text. */
const piece: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 5, arbitrary: ascii.map(latin1) },
  { weight: 3, arbitrary: encodedWord },
  { weight: 2, arbitrary: fc.uint8Array({ min: 0x80, max: 0xff, minLength: 1, maxLength: 4 }).map((a) => Buffer.from(a)) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }).map((s) => Buffer.from(s, 'utf8')) },
  { weight: 1, arbitrary: fc.constantFrom('\u0000', '\r\n ', '\r\n\t', ';', '"', '\\', '=?', '?=').map(latin1) },
  { weight: 1, arbitrary: fc.integer({ min: 500, max: 3000 }).map((n) => Buffer.alloc(n, 'v')) },
);
const value = fc.array(piece, { maxLength: 5 }).map((ps) => Buffer.concat(ps));
const headerName = fc.oneof(
  fc.constantFrom('Subject', 'From', 'To', 'Message-ID', 'X-Custom', 'Received', 'Content-Type', 'Content-Disposition', 'Reply-To', 'Date', 'In-Reply-To'),
  fc.string({ unit: fc.constantFrom(...'abcXYZ-_0'), minLength: 1, maxLength: 10 }),
  fc.tuple(ascii, fc.uint8Array({ min: 0x80, max: 0xff, minLength: 1, maxLength: 2 })).map(([a, b]) => Buffer.concat([latin1(a.replace(/[: ]/g, '')), Buffer.from(b)]).toString('latin1')),
  fc.constant('X-Nul\u0000Name'),
);
export const header = fc.tuple(headerName, value).map(([name, v]) => Buffer.concat([latin1(`${name}: `), v, latin1('\r\n')]));

/** A body part's content: text in a declared charset and transfer encoding, possibly a lie about both. */
const leaf = fc.tuple(
  fc.constantFrom('text/plain', 'text/html', 'application/octet-stream', 'image/png', 'message/rfc822', 'text/calendar'),
  charset,
  fc.constantFrom('7bit', '8bit', 'base64', 'quoted-printable', 'binary', 'x-bogus'),
  fc.oneof(value, randomBytes(200)),
  fc.option(fc.oneof(ascii, encodedWord.map((b) => b.toString('latin1')), fc.constant("utf-16''%00%D8"), fc.constant('\u0000.pdf')), { nil: undefined }),
).map(([type, cs, cte, content, filename]) => {
  const encoded = cte === 'base64' ? latin1(content.toString('base64').replace(/.{76}/g, '$&\r\n')) : content;
  const disposition = filename === undefined ? ''
    : filename.includes("''") ? `Content-Disposition: attachment; filename*=${filename}\r\n` : `Content-Disposition: attachment; filename="${filename}"\r\n`;
  return Buffer.concat([latin1(`Content-Type: ${type}; charset=${cs}\r\nContent-Transfer-Encoding: ${cte}\r\n${disposition}\r\n`), encoded, latin1('\r\n')]);
});

/** A part: a leaf, or a multipart whose boundary may be missing, misquoted, never used, or left unclosed. */
const { part } = fc.letrec<{ part: Buffer }>((tie) => ({
  part: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.tuple(fc.constantFrom('mixed', 'alternative', 'related', 'digest'), ascii.map((b) => b.replace(/["\r\n]/g, '') || 'b'),
      fc.constantFrom('ok', 'no-boundary-param', 'never-used', 'unclosed', 'other-boundary'), fc.array(tie('part'), { maxLength: 3 }))
      .map(([sub, boundary, defect, parts]) => {
        const param = defect === 'no-boundary-param' ? '' : `; boundary="${boundary}"`;
        const used = defect === 'never-used' ? `${boundary}x` : boundary;
        const body = Buffer.concat([
          ...parts.flatMap((p) => [latin1(`--${used}\r\n`), p]),
          latin1(defect === 'unclosed' ? '' : `--${defect === 'other-boundary' ? 'zz' : used}--\r\n`),
        ]);
        return Buffer.concat([latin1(`Content-Type: multipart/${sub}${param}\r\n\r\n`), body]);
      })),
}));

/** A whole message: generated top headers, a MIME-Version, then a part (its own headers join the top block). */
export const generatedMessage = fc.tuple(fc.array(header, { maxLength: 8 }), part).map(([headers, body]) => Buffer.concat([...headers, latin1('MIME-Version: 1.0\r\n'), body]));
