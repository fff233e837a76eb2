// The lease keeper against a stand-in renewal: what a node holds is renewed
// every third of the lease, from the time the renewal was sent; a lease the
// edge calls lost is never renewed again; a failed renewal says so once and
// stops counting the leases as renewed until one is answered.
import { afterEach, expect, test } from 'vitest';
import type { OutboundLeaseRef, OutboundRenewAnswer } from '@edgemail/shared';
import type { Log } from '../log.js';
import { makeJob } from '../../test-support/jobs.js';
import { LeaseKeeper } from './lease-keeper.js';

const lines: { level: string; message: string }[] = [];
const log: Log = {
  info: (message) => lines.push({ level: 'info', message }),
  warn: (message) => lines.push({ level: 'warn', message }),
  error: (message) => lines.push({ level: 'error', message }),
};
const keepers: LeaseKeeper[] = [];
afterEach(() => {
  for (const k of keepers.splice(0)) k.stop();
  lines.length = 0;
});

const until = async (cond: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
};

function leasedJob(leaseMs: number) {
  return { ...makeJob(`r${Math.random()}@dest.test`), lease_until: new Date(Date.now() + leaseMs).toISOString() };
}

test('held jobs are renewed every third of the lease, each new end counted from when the renewal was sent; a released one is not named', async () => {
  const calls: OutboundLeaseRef[][] = [];
  const keeper = new LeaseKeeper({
    log,
    renew: async (leases) => {
      calls.push(leases);
      return { renewed: leases.map((l) => ({ email_id: l.email_id, lease_until: new Date(Date.now() + 900).toISOString(), lease_ms: 900 })), lost: [] };
    },
  });
  keepers.push(keeper);
  const [a, b] = [leasedJob(900), leasedJob(900)];
  const before = Date.now();
  keeper.hold(a);
  keeper.hold(b);
  await until(() => calls.length >= 1);
  // About a third of 900 ms after the claim, both together.
  expect(Date.now() - before).toBeGreaterThanOrEqual(250);
  expect(calls[0]!.map((l) => l.email_id).sort()).toEqual([a.email_id, b.email_id].sort());
  expect(calls[0]![0]).toEqual({ email_id: expect.any(String), attempt: 1 });
  await until(() => Date.parse(a.lease_until) > before + 900);
  keeper.release(b.email_id, b.attempt);
  const seen = calls.length;
  await until(() => calls.length > seen);
  expect(calls.at(-1)!.map((l) => l.email_id)).toEqual([a.email_id]);
  expect(keeper.renewing).toBe(true);
  // The lease outlives its first end while held.
  await new Promise((r) => setTimeout(r, 1000));
  expect(Date.parse(a.lease_until)).toBeGreaterThan(Date.now());
});

test('a lease the edge calls lost is marked, its end put in the past, and not renewed again', async () => {
  const calls: OutboundLeaseRef[][] = [];
  let lose = '';
  const keeper = new LeaseKeeper({
    log,
    renew: async (leases): Promise<OutboundRenewAnswer> => {
      calls.push(leases);
      return {
        renewed: leases.filter((l) => l.email_id !== lose).map((l) => ({ email_id: l.email_id, lease_until: new Date(Date.now() + 600).toISOString(), lease_ms: 600 })),
        lost: leases.filter((l) => l.email_id === lose).map((l) => l.email_id),
      };
    },
  });
  keepers.push(keeper);
  const [kept, lost] = [leasedJob(600), leasedJob(600)];
  lose = lost.email_id;
  keeper.hold(kept);
  keeper.hold(lost);
  await until(() => keeper.lost(lost));
  expect(keeper.lost(kept)).toBe(false);
  expect(Date.parse(lost.lease_until)).toBeLessThan(Date.now());
  // Released once the worker has given it up; the next renewal names only the other.
  keeper.release(lost.email_id, lost.attempt);
  const seen = calls.length;
  await until(() => calls.length > seen);
  expect(calls.at(-1)!.map((l) => l.email_id)).toEqual([kept.email_id]);
});

test('a renewal that fails is logged once for the streak and the leases count as not renewed until one is answered; an edge without the route is one such failure each time', async () => {
  let fail = true;
  const keeper = new LeaseKeeper({
    log,
    renew: async (leases) => {
      if (fail) throw new Error('edge answered 404');
      return { renewed: leases.map((l) => ({ email_id: l.email_id, lease_until: new Date(Date.now() + 600).toISOString(), lease_ms: 600 })), lost: [] };
    },
  });
  keepers.push(keeper);
  const job = leasedJob(600);
  const firstEnd = job.lease_until;
  keeper.hold(job);
  expect(keeper.renewing).toBe(true);
  await until(() => !keeper.renewing);
  await new Promise((r) => setTimeout(r, 500));
  expect(job.lease_until).toBe(firstEnd);
  expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
  fail = false;
  await until(() => keeper.renewing);
  expect(Date.parse(job.lease_until)).toBeGreaterThan(Date.parse(firstEnd));
  expect(lines.some((l) => l.message === 'outbound leases renewed again')).toBe(true);
});

test('without a renewal function nothing is renewed and leases never count as renewed', () => {
  const keeper = new LeaseKeeper({ log });
  keepers.push(keeper);
  keeper.hold(leasedJob(600));
  expect(keeper.renewing).toBe(false);
  expect(keeper.size).toBe(1);
});
