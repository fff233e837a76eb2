import { describe, expect, it } from 'vitest';
import { safeContentType } from './media-type.js';

describe('safeContentType', () => {
  it('keeps well-formed media types, parameters included', () => {
    expect(safeContentType('application/pdf')).toBe('application/pdf');
    expect(safeContentType('text/plain; charset="utf-8"')).toBe('text/plain; charset="utf-8"');
    expect(safeContentType('image/svg+xml')).toBe('image/svg+xml');
  });

  it('replaces anything else with application/octet-stream', () => {
    for (const bad of ['', 'pdf', 'text/html\r\nX-Injected: 1', 'a/b; c', 'ü/x', 'text/plain; charset="a\nb"']) {
      expect(safeContentType(bad)).toBe('application/octet-stream');
    }
  });
});
