// Properties of the node's MIME reading (issue 33, "A fuzzer of our own"),
// over generated messages: header names and values with folded lines, encoded
// words in charsets that decode to nonsense (UTF-16 halves, unknown names),
// 8-bit bytes, NUL, long lines, broken and nested multiparts. Whatever comes,
// parseMessage settles without throwing, the meta it builds passes the
// edge's schema, and every string the edge would store from it can be stored
// by PostgreSQL (no NUL, no unpaired surrogate). `pnpm fuzz` runs many more
// cases (FC_NUM_RUNS); the same messages through a real node and edge are in
// test/mime-ingest.property.test.ts.
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ParsedMeta } from '@edgemail/shared';
import { generatedMessage, latin1 } from '../../../test-support/mime-messages.js';
import { parseMessage } from './parse-message.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 300);

/** What PostgreSQL text and jsonb can hold: no NUL, and the string survives UTF-8 unchanged (no unpaired surrogate). */
const storable = (s: string) => !s.includes('\u0000') && Buffer.from(s, 'utf8').toString('utf8') === s;

/** Every string (and key) in a JSON-like value, with its path. */
function* strings(value: unknown, path = ''): Generator<[string, string]> {
  if (typeof value === 'string') yield [path, value];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* strings(v, `${path}.${i}`);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      yield [`${path}.<key>`, k];
      yield* strings(v, `${path}.${k}`);
    }
  }
}

// ---- properties -------------------------------------------------------------

describe('parseMessage over generated messages', () => {
  test('settles, builds a meta the edge\'s schema takes, and every string the edge stores from it is storable', async () => {
    await fc.assert(fc.asyncProperty(generatedMessage, fc.integer({ min: 1, max: 4096 }), async (raw, chunk) => {
      // Fed in chunks: a header or boundary cut across two reads must not change the outcome.
      const chunks = Array.from({ length: Math.ceil(raw.length / chunk) }, (_, i) => raw.subarray(i * chunk, (i + 1) * chunk));
      const { parsed, attachments } = await parseMessage(Readable.from(chunks), { timeoutMs: 10_000 });
      expect(parsed.ok || (typeof parsed.error === 'string' && parsed.error.length > 0)).toBe(true);
      expect(attachments.map((a) => (a.content as Uint8Array).byteLength)).toEqual(parsed.attachments.map((a) => a.size));
      const taken = ParsedMeta.safeParse(parsed);
      expect(taken.success, JSON.stringify(taken.error?.issues)).toBe(true);
      for (const [path, s] of strings(taken.data)) expect(storable(s), `${path}: ${JSON.stringify(s.slice(0, 200))}`).toBe(true);
    }), {
      numRuns,
      examples: [
        // A UTF-16 encoded word of one lone high surrogate; an RFC 2231 filename of one.
        [latin1('Subject: =?UTF-16BE?B?2AA=?=\r\nX-A: =?UTF-16LE?B?ANg=?=\r\n\r\nhi\r\n'), 4096],
        [latin1("MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain; charset=utf-16le\r\nContent-Disposition: attachment; filename*=utf-16''%00%D8\r\n\r\n\u0000\u00d8\r\n--b--\r\n"), 7],
        [latin1('Subject: a\u0000b\r\nX-Nul\u0000Name: v\r\n\r\nbody\u0000\r\n'), 3],
      ],
    });
  }, Math.max(120_000, numRuns * 100));
});
