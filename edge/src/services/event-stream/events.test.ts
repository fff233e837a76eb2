import { describe, expect, test } from 'vitest';
import { auditEvent, deliveryResult, outboxEvent, visibleEventNames } from './events.js';
import { lastEventId, sseEvent } from './sse.js';

describe('which kinds a member sees', () => {
  test('owners and admins see all four; a plain member everything but audit', () => {
    expect(visibleEventNames({ role: 'owner', groupPermissions: null })).toEqual(['inbound.received', 'email.status', 'webhook.delivery', 'audit']);
    expect(visibleEventNames({ role: 'admin', groupPermissions: null })).toEqual(['inbound.received', 'email.status', 'webhook.delivery', 'audit']);
    expect(visibleEventNames({ role: 'member', groupPermissions: null })).toEqual(['inbound.received', 'email.status', 'webhook.delivery']);
  });

  test('a custom group sees what its permissions read, and audit only with the admin role', () => {
    expect(visibleEventNames({ role: 'member', groupPermissions: ['inbound:read'] })).toEqual(['inbound.received']);
    expect(visibleEventNames({ role: 'member', groupPermissions: ['audit:read', 'emails:write'] })).toEqual([]);
    expect(visibleEventNames({ role: 'admin', groupPermissions: ['webhooks:read'] })).toEqual(['webhook.delivery', 'audit']);
  });
});

describe('what becomes which event', () => {
  const at = new Date('2026-11-26T17:00:00.000Z');

  test('inbound.received as itself, every email.* as email.status, anything else not at all', () => {
    expect(outboxEvent({ id: 7, event: 'inbound.received', data: { id: 'a' }, createdAt: at }))
      .toEqual({ source: 'outbox:7', name: 'inbound.received', payload: '{"type":"inbound.received","at":"2026-11-26T17:00:00.000Z","data":{"id":"a"}}' });
    for (const event of ['email.sent', 'email.failed', 'email.bounced', 'email.complained']) {
      expect(outboxEvent({ id: 8, event, data: {}, createdAt: at })).toMatchObject({ name: 'email.status', payload: expect.stringContaining(`"type":"${event}"`) });
    }
    expect(outboxEvent({ id: 9, event: 'domain.verified', data: {}, createdAt: at })).toBeNull();
  });

  test('an attempt: pending while attempts remain, failed on the last, succeeded on a 2xx; no URL or body', () => {
    const delivery = { id: 'd', webhookId: 'w', event: 'inbound.received', attempt: 2 };
    const failed = { ok: false, statusCode: 500, error: 'HTTP 500', durationMs: 12, startedAt: at };
    expect(deliveryResult({ delivery, outcome: failed }, 3).status).toBe('pending');
    expect(deliveryResult({ delivery, outcome: failed }, 2).status).toBe('failed');
    expect(deliveryResult({ delivery, outcome: { ...failed, ok: true, statusCode: 204, error: null } }, 2).status).toBe('succeeded');
  });

  test('an audit event carries the audit log\'s fields under its own type', () => {
    const e = auditEvent({ id: 'x', type: 'webhook.created', projectId: 'p', actorId: 'u', actorEmail: 'ann@example.org', clientIp: '192.0.2.1', method: 'POST', path: '/api/v1/webhooks', status: 201, createdAt: at });
    expect(e.source).toBe('audit:x');
    expect(JSON.parse(e.payload)).toEqual({ type: 'webhook.created', at: '2026-11-26T17:00:00.000Z', data: {
      id: 'x', category: 'project', type: 'webhook.created', project_id: 'p', actor_id: 'u', actor_email: 'ann@example.org',
      client_ip: '192.0.2.1', method: 'POST', path: '/api/v1/webhooks', status: 201, created_at: '2026-11-26T17:00:00.000Z',
    } });
  });
});

describe('SSE framing and the resume position', () => {
  test('an event is id, event and one data line, then a blank line', () => {
    expect(new TextDecoder().decode(sseEvent(3, 'audit', '{"a":1}'))).toBe('id: 3\nevent: audit\ndata: {"a":1}\n\n');
    expect(new TextDecoder().decode(sseEvent(null, 'end', '{}'))).toBe('event: end\ndata: {}\n\n');
  });

  test('Last-Event-ID wins over the query parameter; absent is undefined; anything but a whole number is a problem', () => {
    expect(lastEventId('12', '5')).toBe(12);
    expect(lastEventId(undefined, '5')).toBe(5);
    expect(lastEventId('', '5')).toBe(5);
    expect(lastEventId(undefined, undefined)).toBeUndefined();
    expect(lastEventId('0', undefined)).toBe(0);
    for (const bad of ['-1', '1.5', 'abc', '1e3', '99999999999999999']) {
      expect(lastEventId(bad, undefined)).toEqual({ problem: expect.stringContaining('Last-Event-ID header must be an event id') });
    }
    expect(lastEventId(undefined, 'x')).toEqual({ problem: expect.stringContaining('last_event_id must be an event id') });
  });
});
