import { expect, test } from 'vitest';
import { isTransient, retryTransient } from './retry-transient.js';

const transient = () => Object.assign(new Error('Network connection lost.'), { retryable: true });
const overloaded = () => Object.assign(new Error('Durable Object is overloaded.'), { retryable: true, overloaded: true });

test('only a retryable error that is not an overload is transient', () => {
  expect(isTransient(transient())).toBe(true);
  expect(isTransient(overloaded())).toBe(false);
  expect(isTransient(new Error('boom'))).toBe(false);
  expect(isTransient(null)).toBe(false);
});

test('a transient failure is tried again, up to the attempts, then its error is thrown', async () => {
  let calls = 0;
  expect(await retryTransient(async () => { if (++calls < 3) throw transient(); return 'ok'; }, { firstDelayMs: 1 })).toBe('ok');
  expect(calls).toBe(3);

  calls = 0;
  await expect(retryTransient(async () => { calls++; throw transient(); }, { attempts: 2, firstDelayMs: 1 })).rejects.toThrow('Network connection lost.');
  expect(calls).toBe(2);
});

test('an overload or an error of the call itself is thrown at once', async () => {
  for (const error of [overloaded(), new Error('project not found')]) {
    let calls = 0;
    await expect(retryTransient(async () => { calls++; throw error; }, { firstDelayMs: 1 })).rejects.toBe(error);
    expect(calls).toBe(1);
  }
});
