// When a node orders (acme-manager.ts): the edge's lease decides, an order's
// result is stored, a failure is reported with the CA's detail and followed by
// a longer wait, refusals and a revoked credential are told apart. The edge and
// the CA are stand-ins here (the real ones: test/acme-relay.test.ts and
// test/acme-pebble.test.ts); the decisions are the manager's.
import { describe, expect, it } from 'vitest';
import type { AcmeLeaseAnswer } from '@edgemail/shared';
import { collectingLog, type LogLine } from '../../../test-support/inbound-harness.js';
import { EdgeRefusedError, NodeRevokedError } from '../../edge/errors.js';
import { createAcmeManager } from './acme-manager.js';
import type { IssuedCertificate } from './order.js';

const HOUR = 3_600_000;
const ISSUED: IssuedCertificate = { certificate: 'CERT', chain: 'CHAIN', privateKey: 'KEY' };

function harness(opts: { lease?: (host: string) => AcmeLeaseAnswer | Error; order?: (host: string) => Promise<IssuedCertificate> } = {}) {
  let clock = 1_000_000;
  const calls: string[] = [];
  const stored: unknown[] = [];
  const reported: [string, string][] = [];
  const fatal: Error[] = [];
  const logs: LogLine[] = [];
  const granted = (host: string): AcmeLeaseAnswer => ({ host, granted: true, expires_at: 'soon', reason: null, not_after: null });
  const manager = createAcmeManager({
    hosts: ['mx1.example.net', 'mx2.example.net'],
    log: collectingLog(logs),
    now: () => clock,
    onFatal: (err) => fatal.push(err),
    edge: {
      acmeLease: async (host) => {
        calls.push(`lease ${host}`);
        const answer = (opts.lease ?? granted)(host);
        if (answer instanceof Error) throw answer;
        return answer;
      },
      storeAcmeCertificate: async (pair) => {
        stored.push(pair);
        return { name: `acme:${pair.host}`, host: pair.host, fingerprint_sha256: 'ff', not_after: 'later' };
      },
      reportAcmeFailure: async (host, error) => {
        reported.push([host, error]);
        return { host, retry_after: 'in an hour' };
      },
    },
    order: async (host) => {
      calls.push(`order ${host}`);
      return (opts.order ?? (async () => ISSUED))(host);
    },
  });
  return { manager, calls, stored, reported, fatal, logs, advance: (ms: number) => { clock += ms; } };
}

describe('acme manager', () => {
  it('orders only what the edge grants, and stores what was issued', async () => {
    const h = harness({ lease: (host) => host === 'mx1.example.net'
      ? { host, granted: true, expires_at: 'soon', reason: null, not_after: null }
      : { host, granted: false, expires_at: null, reason: 'not_due', not_after: '2027-01-01T00:00:00.000Z' } });
    expect(await h.manager.checkNow()).toEqual({ 'mx1.example.net': 'stored', 'mx2.example.net': 'not_due' });
    expect(h.calls).toEqual(['lease mx1.example.net', 'order mx1.example.net', 'lease mx2.example.net']);
    expect(h.stored).toEqual([{ host: 'mx1.example.net', certificate: 'CERT', chain: 'CHAIN', private_key: 'KEY' }]);
  });

  it('another node holding the lease: no order', async () => {
    const h = harness({ lease: (host) => ({ host, granted: false, expires_at: 'soon', reason: 'held', not_after: null }) });
    expect(await h.manager.checkNow()).toEqual({ 'mx1.example.net': 'held', 'mx2.example.net': 'held' });
    expect(h.calls.filter((c) => c.startsWith('order'))).toEqual([]);
  });

  it('a failed order: logged once with the CA\'s detail, reported, then no lease asked until the wait is over (doubling)', async () => {
    let fail = true;
    const h = harness({ order: async (host) => {
      if (fail && host === 'mx1.example.net') throw new Error('urn:ietf:params:acme:error:connection:\n  Connection refused');
      return ISSUED;
    } });
    expect((await h.manager.checkNow())['mx1.example.net']).toBe('failed');
    expect(h.reported).toEqual([['mx1.example.net', 'urn:ietf:params:acme:error:connection: Connection refused']]);
    const warnings = h.logs.filter((l) => l.level === 'warn');
    expect(warnings).toEqual([{ level: 'warn', message: 'acme: order failed', fields: { host: 'mx1.example.net', error: 'urn:ietf:params:acme:error:connection: Connection refused', failures: 1, next_try_in_s: 3600 } }]);

    h.calls.length = 0;
    h.advance(HOUR - 1);
    expect((await h.manager.checkNow())['mx1.example.net']).toBe('backing_off');
    expect(h.calls.filter((c) => c.includes('mx1'))).toEqual([]);
    h.advance(1);
    expect((await h.manager.checkNow())['mx1.example.net']).toBe('failed');
    expect(h.logs.filter((l) => l.level === 'warn').at(-1)!.fields).toMatchObject({ failures: 2, next_try_in_s: 7200 });
    h.advance(2 * HOUR);
    fail = false;
    expect((await h.manager.checkNow())['mx1.example.net']).toBe('stored');
  });

  it('the edge refusing (acme off there, a host it does not list): no order, a warning naming why; a revoked node stops', async () => {
    const refusing = harness({ lease: () => new EdgeRefusedError('POST /relay/v1/acme/leases', 409, 'mx1.example.net is not in the edge\'s acme.hosts') });
    expect((await refusing.manager.checkNow())['mx1.example.net']).toBe('refused');
    expect(refusing.calls.filter((c) => c.startsWith('order'))).toEqual([]);
    expect(refusing.logs.find((l) => l.level === 'warn')!.fields!.error).toContain('is not in the edge\'s acme.hosts');
    expect(refusing.fatal).toEqual([]);

    const revoked = harness({ lease: () => new NodeRevokedError('POST /relay/v1/acme/leases') });
    await revoked.manager.checkNow();
    expect(revoked.fatal[0]).toBeInstanceOf(NodeRevokedError);
  });
});
