import { describe, expect, it } from 'vitest';
import { contentDisposition } from './download.js';

describe('contentDisposition', () => {
  it('quotes a plain ASCII name', () => {
    expect(contentDisposition('report.pdf', 'x')).toBe('attachment; filename="report.pdf"');
  });

  it('adds filename* in UTF-8 for a non-ASCII name, with an ASCII fallback', () => {
    expect(contentDisposition('Übersicht Q3.pdf', 'x'))
      .toBe(`attachment; filename="_bersicht Q3.pdf"; filename*=UTF-8''%C3%9Cbersicht%20Q3.pdf`);
    expect(contentDisposition('日本.txt', 'x')).toBe(`attachment; filename="__.txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt`);
  });

  it('encodes the characters RFC 8187 does not allow bare', () => {
    expect(contentDisposition("é'(x)*.txt", 'x')).toBe(`attachment; filename="_'(x)*.txt"; filename*=UTF-8''%C3%A9%27%28x%29%2A.txt`);
  });

  it('strips CR, LF, other controls, quotes and backslashes: no header injection', () => {
    const header = contentDisposition('a"\r\nSet-Cookie: x=1\\.txt', 'x');
    expect(header).toBe('attachment; filename="aSet-Cookie: x=1.txt"');
    expect(header).not.toMatch(/[\r\n]/);
  });

  it('falls back when nothing is left', () => {
    expect(contentDisposition('', 'attachment-2')).toBe('attachment; filename="attachment-2"');
    expect(contentDisposition('"\r\n"', 'attachment-2')).toBe('attachment; filename="attachment-2"');
  });
});
