import { describe, expect, test } from 'vitest';
import { PAGE_BODY_BYTES, PAGE_ROWS, withinBodyBudget } from './keyset.js';

const rows = (...bytes: number[]) => bytes.map((b, i) => ({ id: String(i), bytes: b }));
const MiB = 1024 * 1024;

describe('withinBodyBudget', () => {
  test('keeps the leading rows whose bodies fit the budget; more follow', () => {
    const { kept, more } = withinBodyBudget(rows(MiB, MiB, MiB, MiB, 1, MiB));
    expect(PAGE_BODY_BYTES).toBe(4 * MiB);
    expect(kept.map((r) => r.id)).toEqual(['0', '1', '2', '3']);
    expect(more).toBe(true);
  });

  test('a row larger than the budget is a page of its own, never an empty page', () => {
    expect(withinBodyBudget(rows(10 * MiB, 1))).toEqual({ kept: rows(10 * MiB), more: true });
    expect(withinBodyBudget(rows(10 * MiB))).toEqual({ kept: rows(10 * MiB), more: false });
  });

  test('a short page that fits is the last; a full one may have a next', () => {
    expect(withinBodyBudget(rows(1, 2, 3))).toEqual({ kept: rows(1, 2, 3), more: false });
    expect(withinBodyBudget([])).toEqual({ kept: [], more: false });
    const full = rows(...Array<number>(PAGE_ROWS).fill(10));
    expect(withinBodyBudget(full)).toEqual({ kept: full, more: true });
  });
});
