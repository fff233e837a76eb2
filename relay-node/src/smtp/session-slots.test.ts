import { describe, expect, it } from 'vitest';
import { createSessionSlots, type SessionSlot } from './session-slots.js';

const held = (taken: ReturnType<ReturnType<typeof createSessionSlots>['take']>): SessionSlot => {
  if ('refused' in taken) throw new Error(`refused: ${taken.refused}`);
  return taken;
};

describe('createSessionSlots', () => {
  it('refuses past the total cap and past one address\'s cap, naming which', () => {
    const slots = createSessionSlots({ maxSessions: 3, maxPerAddress: 2 });
    held(slots.take('192.0.2.1'));
    held(slots.take('192.0.2.1'));
    expect(slots.take('192.0.2.1')).toEqual({ refused: 'address' });
    held(slots.take('192.0.2.2'));
    expect(slots.take('192.0.2.3')).toEqual({ refused: 'total' });
    expect([slots.open(), slots.open('192.0.2.1'), slots.open('192.0.2.3')]).toEqual([3, 2, 0]);
  });

  it('releases a slot once however often release() is called', () => {
    const slots = createSessionSlots({ maxSessions: 2, maxPerAddress: 0 });
    const a = held(slots.take('192.0.2.1'));
    held(slots.take('192.0.2.2'));
    a.release();
    a.release();
    expect(slots.open()).toBe(1);
    held(slots.take('192.0.2.3'));
    expect(slots.take('192.0.2.4')).toEqual({ refused: 'total' });
  });

  it('counts IPv6 clients by /64 and IPv4-mapped addresses as IPv4', () => {
    const slots = createSessionSlots({ maxSessions: 0, maxPerAddress: 1 });
    held(slots.take('2001:db8:1:2::1'));
    expect(slots.take('2001:db8:1:2:ffff::9')).toEqual({ refused: 'address' });
    held(slots.take('2001:db8:1:3::1'));
    held(slots.take('198.51.100.7'));
    expect(slots.take('::ffff:198.51.100.7')).toEqual({ refused: 'address' });
  });

  it('admits everything when both caps are 0', () => {
    const slots = createSessionSlots({ maxSessions: 0, maxPerAddress: 0 });
    for (let i = 0; i < 1000; i++) held(slots.take('192.0.2.1'));
    expect(slots.open('192.0.2.1')).toBe(1000);
  });
});
