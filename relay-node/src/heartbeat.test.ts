import { afterEach, describe, expect, it } from 'vitest';
import { collectingLog, type LogLine } from '../test-support/inbound-harness.js';
import { EdgeUnavailableError, NodeRevokedError } from './edge/errors.js';
import { createHeartbeat, type Heartbeat } from './heartbeat.js';
import type { HeartbeatAnswer, HeartbeatBody } from '@edgemail/shared';

const BODY: HeartbeatBody = { version: '0.0.0', listeners: [], tls: { source: 'none', not_after: null }, spool_depth: 0, dead_letters: 0, dead_letter_bytes: 0 };
let beat: Heartbeat | undefined;
afterEach(() => beat?.stop());

function make(answers: (HeartbeatAnswer | Error)[]) {
  const logs: LogLine[] = [];
  const seen = { versions: [] as string[], fatal: null as Error | null, recovered: 0, bodies: [] as HeartbeatBody[] };
  beat = createHeartbeat({
    edge: {
      heartbeat: async (body) => {
        seen.bodies.push(body);
        const next = answers.shift()!;
        if (next instanceof Error) throw next;
        return next;
      },
    },
    report: async () => BODY,
    onDomainsVersion: (v) => seen.versions.push(v),
    onFatal: (e) => (seen.fatal = e),
    onRecovered: () => seen.recovered++,
    log: collectingLog(logs),
  });
  return { beat, seen, logs };
}

const ok = (version: string) => ({ node: {} as never, domains_version: version });

describe('heartbeat', () => {
  it('reports, hands on the domain version, and warns once while the edge is away', async () => {
    const { beat, seen, logs } = make([ok('v1'), new EdgeUnavailableError('POST /relay/v1/heartbeat', null, 'down'), new EdgeUnavailableError('POST /relay/v1/heartbeat', 503, 'down'), ok('v2')]);
    for (let i = 0; i < 4; i++) await beat.beat();
    expect(seen.bodies).toEqual([BODY, BODY, BODY, BODY]);
    expect(seen.versions).toEqual(['v1', 'v2']);
    expect(logs.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(seen.recovered).toBe(1);
    expect(seen.fatal).toBeNull();
  });

  it('is fatal on revocation', async () => {
    const { beat, seen } = make([new NodeRevokedError('POST /relay/v1/heartbeat')]);
    await beat.beat();
    expect(seen.fatal).toBeInstanceOf(NodeRevokedError);
  });
});
