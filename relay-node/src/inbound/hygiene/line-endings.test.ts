import { describe, expect, test } from 'vitest';
import { BareLineEndingError } from './hygiene-errors.js';
import { createLineEndingNormalizer, type BareLineEndingMode } from './line-endings.js';

/** What normalize must produce: every CRLF, CR or LF becomes CRLF. */
const oracle = (text: string) => text.replace(/\r\n|\r|\n/g, '\r\n');
/** Where reject must stop: the first CR not followed by LF, or LF not preceded by CR. */
const firstBare = (text: string) => {
  const match = /\r(?!\n)|(?<!\r)\n/.exec(text);
  return match ? { kind: match[0] === '\r' ? 'CR' : 'LF', offset: match.index } : null;
};

interface Run { out: string; error: unknown; consumed: number }

/**
 * Writes `chunks` (boundaries kept) into a normalizer and collects every byte
 * it passes on; `consumed` counts the chunks it accepted.
 */
async function run(mode: BareLineEndingMode, chunks: string[]): Promise<Run> {
  const normalizer = createLineEndingNormalizer(mode);
  const out: Buffer[] = [];
  normalizer.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise<unknown>((resolve) => {
    normalizer.on('end', () => resolve(null));
    normalizer.on('error', resolve);
  });
  let consumed = 0;
  for (const chunk of chunks) {
    await new Promise<void>((resolve) => normalizer.write(Buffer.from(chunk, 'latin1'), () => resolve()));
    consumed += 1;
  }
  normalizer.end();
  const error = await done;
  return { out: Buffer.concat(out).toString('latin1'), error, consumed };
}

/** Every way to cut `text` into two chunks, and into three for short texts, and byte by byte. */
function splits(text: string): string[][] {
  const result: string[][] = [[text], [...text]];
  for (let i = 0; i <= text.length; i++) result.push([text.slice(0, i), text.slice(i)]);
  if (text.length <= 40) {
    for (let i = 1; i < text.length; i++) for (let j = i + 1; j < text.length; j++) result.push([text.slice(0, i), text.slice(i, j), text.slice(j)]);
  }
  return result;
}

// The SMTP smuggling sequences (and neighbours): each must come out as a
// proper line in normalize mode and be refused in reject mode.
const smuggling = [
  ['<LF>.<CRLF>', 'Subject: x\r\n\r\nhi\n.\r\nMAIL FROM:<evil@example.test>\r\n'],
  ['<CR>.<CR><LF>', 'Subject: x\r\n\r\nhi\r.\r\r\nRCPT TO:<victim@example.test>\r\n'],
  ['<LF>.<LF>', 'Subject: x\r\n\r\nhi\n.\nDATA\r\n'],
  ['<CR>.<CR>', 'Subject: x\r\n\r\nhi\r.\rQUIT\r\n'],
  ['<CRLF>.<LF>', 'Subject: x\r\n\r\nhi\r\n.\nQUIT\r\n'],
  ['<CRLF>.<CR>', 'Subject: x\r\n\r\nhi\r\n.\rQUIT\r\n'],
  ['trailing bare CR', 'Subject: x\r\n\r\nends in CR\r'],
  ['trailing bare LF', 'Subject: x\r\n\r\nends in LF\n'],
  ['CR CR LF', 'a\r\r\nb\r\n'],
  ['LF CR', 'a\n\rb'],
] as const;

describe('normalize', () => {
  test.each(smuggling)('%s becomes CRLF at every chunk split', async (_name, text) => {
    const expected = oracle(text);
    expect(expected).not.toMatch(/\r(?!\n)|(?<!\r)\n/);
    for (const chunks of splits(text)) {
      const { out, error } = await run('normalize', chunks);
      expect(error).toBeNull();
      expect(out, JSON.stringify(chunks)).toBe(expected);
    }
  });

  test('<LF>.<CRLF> and <CR>.<CR><LF> turn into a dot line, which a relaying client dot-stuffs', async () => {
    expect((await run('normalize', [smuggling[0][1]])).out).toBe('Subject: x\r\n\r\nhi\r\n.\r\nMAIL FROM:<evil@example.test>\r\n');
    expect((await run('normalize', [smuggling[1][1]])).out).toBe('Subject: x\r\n\r\nhi\r\n.\r\n\r\nRCPT TO:<victim@example.test>\r\n');
  });

  test('a CR ending one chunk and an LF starting the next are one CRLF, not two', async () => {
    expect((await run('normalize', ['line\r', '\nnext\r\n'])).out).toBe('line\r\nnext\r\n');
    expect((await run('normalize', ['line\r', '', '\nnext'])).out).toBe('line\r\nnext');
  });

  test('random texts in random chunks match the oracle', async () => {
    const alphabet = ['a', 'b', '.', '\r', '\n', '\r\n'];
    let seed = 42;
    const random = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
    for (let round = 0; round < 300; round++) {
      const text = Array.from({ length: 1 + random(80) }, () => alphabet[random(alphabet.length)]).join('');
      const chunks: string[] = [];
      for (let i = 0; i < text.length; ) { const n = 1 + random(7); chunks.push(text.slice(i, i + n)); i += n; }
      expect((await run('normalize', chunks)).out, JSON.stringify(chunks)).toBe(oracle(text));
    }
  });

  test('clean chunks pass through as the same buffers, and the count of rewrites is kept', async () => {
    const normalizer = createLineEndingNormalizer();
    const seen: Buffer[] = [];
    normalizer.on('data', (chunk: Buffer) => seen.push(chunk));
    const clean = Buffer.from('Subject: x\r\n\r\nbody\r\n');
    normalizer.write(clean);
    normalizer.end(Buffer.from('bare\nend\r'));
    await new Promise((resolve) => normalizer.on('end', resolve));
    expect(seen[0]).toBe(clean);
    expect(Buffer.concat(seen).toString()).toBe('Subject: x\r\n\r\nbody\r\nbare\r\nend\r\n');
    expect(normalizer.normalized).toBe(2);
  });
});

describe('reject', () => {
  test.each(smuggling)('%s fails with the first bare ending, at every chunk split', async (_name, text) => {
    const expected = firstBare(text)!;
    for (const chunks of splits(text)) {
      const { error, consumed } = await run('reject', chunks);
      expect(error, JSON.stringify(chunks)).toBeInstanceOf(BareLineEndingError);
      expect(error).toMatchObject({ ...expected, responseCode: 554, enhancedStatus: '5.5.0' });
      // The whole input was read before failing: the SMTP layer answers after the dot.
      expect(consumed).toBe(chunks.length);
    }
  });

  test('clean data passes unchanged', async () => {
    const text = 'Subject: x\r\n\r\n.leading dot\r\nend\r\n';
    for (const chunks of splits(text)) {
      expect(await run('reject', chunks)).toEqual({ out: text, error: null, consumed: chunks.length });
    }
  });

  test('nothing after the first bare ending is passed on', async () => {
    const { out } = await run('reject', ['ok\r\n', 'bad\nmore\r\n', 'and more\r\n']);
    expect(out).toBe('ok\r\n');
  });
});
