import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DomainsAnswer } from '@edgemail/shared';
import { collectingLog, type LogLine } from '../../test-support/inbound-harness.js';
import { createDomainCache, type DomainCache } from './domain-cache.js';

let dir = '';
let clock = 0;
let edge: { answer: DomainsAnswer | Error; calls: number; gate?: Promise<void> };
let cache: DomainCache | undefined;
const logs: LogLine[] = [];

function make(): DomainCache {
  cache = createDomainCache({
    fetchDomains: async () => {
      edge.calls++;
      await edge.gate;
      if (edge.answer instanceof Error) throw edge.answer;
      return edge.answer;
    },
    file: join(dir, 'domains.json'),
    log: collectingLog(logs),
    now: () => clock,
  });
  return cache;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'relay-domains-'));
  clock = 1_000_000;
  edge = { answer: { domains: ['acme.test'], version: 'v1' }, calls: 0 };
});
afterEach(() => {
  cache?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('domain cache', () => {
  it('answers from the list, refreshing on a miss only when the list is older than 1 s', async () => {
    const domains = make();
    await domains.refresh();
    expect(await domains.accepts('acme.test')).toBe(true);
    expect(await domains.accepts('other.test')).toBe(false);
    expect(edge.calls).toBe(1); // fresh list: the miss is answered from it
    edge.answer = { domains: ['acme.test', 'other.test'], version: 'v2' };
    clock += 1001;
    expect(await domains.accepts('other.test')).toBe(true);
    expect(edge.calls).toBe(2);
  });

  it('keeps one refresh in flight however many RCPTs miss at once', async () => {
    const domains = make();
    let open!: () => void;
    edge.gate = new Promise((resolve) => (open = resolve));
    const answers = Promise.all(Array.from({ length: 20 }, () => domains.accepts('acme.test')));
    open();
    expect(await answers).toEqual(Array(20).fill(true));
    expect(edge.calls).toBe(1);
  });

  it('accepts known domains while the edge is down, and answers unknown ones "try later"', async () => {
    const domains = make();
    await domains.refresh();
    edge.answer = new Error('ECONNREFUSED');
    clock += 60_000;
    expect(await domains.accepts('acme.test')).toBe(true);
    await expect(domains.accepts('new.test')).rejects.toThrow(/cannot refresh/);
    // After a failure, misses do not hammer the edge: no new attempt within 1 s.
    await expect(domains.accepts('new2.test')).rejects.toThrow();
    expect(edge.calls).toBe(2);
  });

  it('refreshes when a heartbeat brings another version', async () => {
    const domains = make();
    await domains.refresh();
    domains.noteVersion('v1');
    expect(edge.calls).toBe(1);
    edge.answer = { domains: ['acme.test', 'b.test'], version: 'v2' };
    domains.noteVersion('v2');
    await new Promise((r) => setTimeout(r, 10));
    expect(edge.calls).toBe(2);
    expect(domains.version).toBe('v2');
    expect(await domains.accepts('b.test')).toBe(true);
  });

  it('keeps the list in domains.json (0600) and starts from it while the edge is down', async () => {
    const first = make();
    await first.refresh();
    first.stop();
    const file = join(dir, 'domains.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ domains: ['acme.test'], version: 'v1' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    edge.answer = new Error('edge down');
    const second = make();
    await second.start();
    expect(await second.accepts('acme.test')).toBe(true);
    await expect(second.accepts('unknown.test')).rejects.toThrow();
  });

  it('knows which domains the edge marked full, from the list and from domains.json', async () => {
    edge.answer = { domains: ['acme.test', 'globex.test'], full: ['globex.test'], version: 'v1' };
    const first = make();
    await first.refresh();
    expect([first.isFull('globex.test'), first.isFull('acme.test')]).toEqual([true, false]);
    first.stop();
    edge.answer = new Error('edge down');
    const second = make();
    await second.start();
    expect(second.isFull('globex.test')).toBe(true);
    await second.refresh().catch(() => undefined); // the start-up refresh, failing
    // The quota freed: the next list clears the mark.
    edge.answer = { domains: ['acme.test', 'globex.test'], version: 'v2' };
    await second.refresh();
    expect(second.isFull('globex.test')).toBe(false);
  });
});
