import { expect, test } from 'vitest';
import { createSpoolId, isSpoolId, spoolIdTime } from './spool-id.js';

test('ids are unique, file-name safe and sort in the order they were made', () => {
  const ids = Array.from({ length: 20_000 }, () => createSpoolId());
  expect(new Set(ids).size).toBe(ids.length);
  expect([...ids].sort()).toEqual(ids);
  for (const id of ids.slice(0, 100)) expect(id).toMatch(/^[0-9a-f]{16}-[0-9a-f]{12}$/);
});

test('the id carries its creation time', () => {
  const before = Date.now();
  const id = createSpoolId();
  expect(spoolIdTime(id).getTime()).toBeGreaterThanOrEqual(before);
  expect(spoolIdTime(id).getTime()).toBeLessThanOrEqual(Date.now() + 1);
});

test.each(['', '../etc/passwd', '019ab3c4d5e60000-5f2a9c0d41e7.json', '019AB3C4D5E60000-5F2A9C0D41E7', '019ab3c4d5e60000/5f2a9c0d41e7'])(
  '%j is not a spool id',
  (text) => expect(isSpoolId(text)).toBe(false),
);
