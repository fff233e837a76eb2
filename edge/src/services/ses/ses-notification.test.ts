import { describe, expect, test } from 'vitest';
import { sesNotification } from '../../../../test/support/sns.js';
import { readSesNotification } from './ses-notification.js';

const MID = '<0b6f4d8e-9a57-4d8b-8f3e-6a1a4a2d1c11@acme.test>';

describe('readSesNotification', () => {
  test('a Permanent bounce is hard, with the codes and the Message-ID', () => {
    expect(readSesNotification(sesNotification('Bounce', MID, ['ann@example.org']))).toEqual({
      kind: 'events', notificationType: 'Bounce', messageId: MID,
      events: [{ address: 'ann@example.org', type: 'hard', smtpCode: 550, status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 user unknown', remoteMta: '192.0.2.25', feedbackType: null }],
    });
  });

  test('Transient and Undetermined bounces are soft', () => {
    for (const bounceType of ['Transient', 'Undetermined'] as const) {
      const reading = readSesNotification(sesNotification('Bounce', MID, ['a@example.org', 'b@example.org'], { bounceType }));
      expect(reading.kind === 'events' && reading.events.map((e) => e.type)).toEqual(['soft', 'soft']);
    }
  });

  test('a complaint carries its feedback type; a delivery its reply', () => {
    const complaint = readSesNotification(sesNotification('Complaint', MID, ['ann@example.org']));
    expect(complaint.kind === 'events' && complaint.events[0]).toMatchObject({ type: 'complaint', feedbackType: 'abuse' });
    const delivery = readSesNotification(sesNotification('Delivery', MID, ['ann@example.org']));
    expect(delivery.kind === 'events' && delivery.events[0]).toMatchObject({ type: 'delivery', smtpCode: 250 });
  });

  test('configuration-set events (eventType) read the same; the Message-ID from headers when commonHeaders lacks it', () => {
    const n = JSON.parse(sesNotification('Bounce', MID, ['ann@example.org']));
    n.eventType = n.notificationType;
    delete n.notificationType;
    delete n.mail.commonHeaders.messageId;
    const reading = readSesNotification(JSON.stringify(n));
    expect(reading).toMatchObject({ kind: 'events', messageId: MID, events: [{ type: 'hard' }] });
  });

  test.each([
    ['not JSON', 'not json', 'Message is not JSON: not an SES notification'],
    ['another shape', '{"hello":1}', 'Message is not an SES notification'],
    ['an SES Send event', JSON.stringify({ eventType: 'Send', mail: {}, send: {} }), 'SES Send is not applied (only Bounce, Complaint and Delivery)'],
    ['a Bounce without its bounce', JSON.stringify({ notificationType: 'Bounce', mail: {} }), 'SES Bounce is not applied (only Bounce, Complaint and Delivery)'],
  ])('%s is ignored, saying why', (_, message, reason) => {
    expect(readSesNotification(message)).toEqual({ kind: 'ignored', reason });
  });
});
