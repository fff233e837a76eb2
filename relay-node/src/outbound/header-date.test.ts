// The Date header written for a job's RFC 3339 date: in the date's own offset (docs/submission.md, "Kept as written").
import { describe, expect, it } from 'vitest';
import { headerDate } from './compose.js';

describe('headerDate', () => {
  it('writes the offset the date carries, and +0000 for Z (as nodemailer does)', () => {
    expect(headerDate('2003-07-01T10:52:37+02:00')).toBe('Tue, 01 Jul 2003 10:52:37 +0200');
    expect(headerDate('2003-07-01T10:52:00-03:30')).toBe('Tue, 01 Jul 2003 10:52:00 -0330');
    expect(headerDate('2026-11-29T08:00:00.000Z')).toBe('Sun, 29 Nov 2026 08:00:00 +0000');
    expect(headerDate('2026-11-29T08:00:00+00:00')).toBe('Sun, 29 Nov 2026 08:00:00 +0000');
  });
});
