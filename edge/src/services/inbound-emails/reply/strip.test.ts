// The reply-stripping corpus (test/fixtures/replies/): each message parsed as
// the relay node hands it over (its text/plain and text/html parts, nothing
// converted), stripped, and compared with its expected text and signature.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { stripReply, STRIP_MAX_CHARS } from './strip.js';
import { htmlToText } from './html-text.js';

const DIR = join(import.meta.dirname, '../../../../../test/fixtures/replies');
const names = readdirSync(DIR).filter((f) => f.endsWith('.eml')).map((f) => f.slice(0, -4)).sort();
const read = (file: string) => readFileSync(join(DIR, file), 'utf8').replace(/\n$/, '');

describe('reply stripping corpus', () => {
  it('holds at least 20 messages', () => expect(names.length).toBeGreaterThanOrEqual(20));

  it('strips every message of the corpus exactly, text and signature', async () => {
    const misses: string[] = [];
    for (const name of names) {
      const mail = await PostalMime.parse(readFileSync(join(DIR, `${name}.eml`)));
      const got = stripReply({ text: mail.text ?? '', html: mail.html ?? '' });
      const signature = existsSync(join(DIR, `${name}.signature.txt`)) ? read(`${name}.signature.txt`) : null;
      const want = { stripped_text: read(`${name}.expected.txt`), stripped_signature: signature };
      if (JSON.stringify(got) !== JSON.stringify(want)) misses.push(`${name}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    }
    const share = (names.length - misses.length) / names.length;
    console.log(`reply stripping: ${names.length - misses.length}/${names.length} messages stripped exactly (${(share * 100).toFixed(1)}%)`);
    expect(misses).toEqual([]);
  });
});

describe('reply stripping cost', () => {
  // Inputs shaped against the rules: long lines that start like a header, many
  // tags that never close, many unterminated comments. Each is cut to
  // STRIP_MAX_CHARS and must take well under a Worker's CPU budget.
  const hostile = [
    `On ${' x'.repeat(STRIP_MAX_CHARS)}`,
    `${'On a b\n'.repeat(STRIP_MAX_CHARS / 7)}`,
    `${'From: a\n'.repeat(STRIP_MAX_CHARS / 8)}`,
    `${'abc. skrev x\n'.repeat(STRIP_MAX_CHARS / 13)}`,
    `${'Op a schreef b\n'.repeat(STRIP_MAX_CHARS / 15)}`,
    `${'W dniu a '.repeat(STRIP_MAX_CHARS / 9)}`,
    `${'-'.repeat(STRIP_MAX_CHARS)}`,
  ];
  for (const [i, text] of hostile.entries()) {
    it(`text ${i} is stripped within 200 ms`, () => {
      const started = performance.now();
      stripReply({ text, html: '' });
      expect(performance.now() - started).toBeLessThan(200);
    });
  }
  it('HTML of unclosed tags and comments is read in linear time', () => {
    const started = performance.now();
    htmlToText('<a'.repeat(100_000) + '<!--'.repeat(100_000));
    stripReply({ text: '', html: '<div '.repeat(50_000) });
    expect(performance.now() - started).toBeLessThan(200);
  });
});
