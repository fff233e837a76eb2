import { describe, expect, test } from 'vitest';
import { enhancedCode, formatEnhancedCode } from './smtp-enhanced-code.js';

describe('enhancedCode', () => {
  test.each([
    // A server's reply (hard bounces, the shared pool's outcome), continuation lines included.
    ['550 5.1.1 <a@b.example>: unknown user', '5.1.1'],
    ['451-4.7.1 greylisted, try again', '4.7.1'],
    ['250 2.0.0 Ok: queued', '2.0.0'],
    // A reply text of our own listener, without the reply code.
    ['5.3.4 Message exceeds the fixed maximum message size', '5.3.4'],
    ['4.4.2 Session reached its maximum duration', '4.4.2'],
    ['5.1.1: no such user', '5.1.1'],
    ['5.7.1', '5.7.1'],
  ])('%s has %s', (reply, code) => {
    const found = enhancedCode(reply);
    expect(found && formatEnhancedCode(found)).toBe(code);
  });

  test.each([
    '550 no such user (see 5.1.1)', // a code later in the text is not one
    '550 5.1', // not three parts
    '550 6.1.1 no such class',
    'Message accepted',
    '5.1.1x not a code',
  ])('%s has none', (reply) => {
    expect(enhancedCode(reply)).toBeNull();
  });
});
