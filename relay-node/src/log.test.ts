// The node's console log: what a person sees at each level, and where.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createConsoleLog } from './log.js';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((line: string) => void out.push(line));
  vi.spyOn(console, 'error').mockImplementation((line: string) => void err.push(line));
  return { out, err };
}

afterEach(() => {
  vi.restoreAllMocks();
});

function logEveryLevel(level?: 'info' | 'debug') {
  const log = createConsoleLog('relay', level ? { level } : {});
  log.debug!('inbound message spooled', { id: 's1' });
  log.info('inbound message forwarded', { id: 's1', records: [{ id: 'r1' }] });
  log.warn('the edge is unreachable; messages stay spooled', { wait_ms: 1000 });
  log.error('cannot list the spool', {});
}

describe('console log', () => {
  it('at the default level drops debug lines; info goes to stdout, warnings and errors to stderr, one line each with the fields as JSON', () => {
    const { out, err } = capture();
    logEveryLevel();
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z relay info inbound message forwarded \{"id":"s1","records":\[\{"id":"r1"\}\]\}$/);
    expect(err).toHaveLength(2);
    expect(err[0]).toMatch(/ relay warn the edge is unreachable; messages stay spooled \{"wait_ms":1000\}$/);
    // No fields, no trailing JSON.
    expect(err[1]).toMatch(/ relay error cannot list the spool$/);
  });

  it('at level debug (--verbose) prints the debug lines too, on stdout', () => {
    const { out, err } = capture();
    logEveryLevel('debug');
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(/ relay debug inbound message spooled \{"id":"s1"\}$/);
    expect(out[1]).toMatch(/ relay info inbound message forwarded /);
    expect(err).toHaveLength(2);
  });
});

describe('JSON log (relay_node.log_format = json, the packaged node)', () => {
  it('one JSON object per line, every level on stdout, debug only at level debug; fields cannot overwrite time, level or msg', () => {
    const { out, err } = capture();
    const log = createConsoleLog('relay', { format: 'json' });
    log.debug!('inbound message spooled', { id: 's1' });
    log.info('inbound message forwarded', { id: 's1', level: 'forged' });
    log.warn('the edge is unreachable; messages stay spooled', { wait_ms: 1000 });
    log.error('cannot list the spool');
    expect(err).toEqual([]);
    const lines = out.map((line) => JSON.parse(line));
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['info', 'inbound message forwarded'], ['warn', 'the edge is unreachable; messages stay spooled'], ['error', 'cannot list the spool'],
    ]);
    expect(lines[0]).toEqual({ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/), level: 'info', msg: 'inbound message forwarded', id: 's1' });
    expect(lines[1].wait_ms).toBe(1000);
    const debug = capture();
    createConsoleLog('relay', { format: 'json', level: 'debug' }).debug!('inbound message spooled', { id: 's1' });
    expect(JSON.parse(debug.out[0]!)).toMatchObject({ level: 'debug', msg: 'inbound message spooled', id: 's1' });
  });
});
