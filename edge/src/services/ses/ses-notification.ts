// What an SES notification (the `Message` of an SNS Notification) says about
// each recipient, before anything is looked up: the original Message-ID, and
// per recipient a bounce (Permanent → hard, Transient or Undetermined →
// soft), a complaint, or a delivery.
import { SesNotificationSchema } from '../../contracts/ses.js';
import type { BounceType } from '../delivery/bounces/report.js';

export interface SesRecipientEvent {
  /** The recipient address as SES gave it. */
  address: string;
  type: BounceType | 'delivery';
  smtpCode: number | null;
  status: string | null;
  diagnostic: string | null;
  remoteMta: string | null;
  feedbackType: string | null;
}

export type SesReading =
  | { kind: 'events'; notificationType: 'Bounce' | 'Complaint' | 'Delivery'; messageId: string | null; events: SesRecipientEvent[] }
  | { kind: 'ignored'; reason: string };

/** Reads a Notification's `Message`. Anything that is not an SES Bounce, Complaint or Delivery is `ignored`, with why. */
export function readSesNotification(message: string): SesReading {
  let json: unknown;
  try {
    json = JSON.parse(message);
  } catch {
    return { kind: 'ignored', reason: 'Message is not JSON: not an SES notification' };
  }
  const parsed = SesNotificationSchema.safeParse(json);
  if (!parsed.success) return { kind: 'ignored', reason: 'Message is not an SES notification' };
  const n = parsed.data;
  const type = n.notificationType ?? n.eventType;
  const messageId = originalMessageId(n);
  const none = { smtpCode: null, status: null, diagnostic: null, remoteMta: null, feedbackType: null };
  if (type === 'Bounce' && n.bounce) {
    const hard = n.bounce.bounceType === 'Permanent';
    return {
      kind: 'events', notificationType: type, messageId,
      events: n.bounce.bouncedRecipients.map((r) => ({
        ...none,
        address: r.emailAddress,
        type: hard ? 'hard' : 'soft',
        smtpCode: smtpCodeOf(r.diagnosticCode),
        status: r.status && /^[245]\.\d{1,3}\.\d{1,3}$/.test(r.status) ? r.status : null,
        diagnostic: r.diagnosticCode ?? `${n.bounce!.bounceType}${n.bounce!.bounceSubType ? ` (${n.bounce!.bounceSubType})` : ''} bounce reported by SES`,
        remoteMta: n.bounce!.remoteMtaIp ?? null,
      })),
    };
  }
  if (type === 'Complaint' && n.complaint) {
    return {
      kind: 'events', notificationType: type, messageId,
      events: n.complaint.complainedRecipients.map((r) => ({
        ...none, address: r.emailAddress, type: 'complaint', feedbackType: n.complaint!.complaintFeedbackType ?? null,
      })),
    };
  }
  if (type === 'Delivery' && n.delivery) {
    return {
      kind: 'events', notificationType: type, messageId,
      events: n.delivery.recipients.map((address) => ({
        ...none, address, type: 'delivery', smtpCode: smtpCodeOf(n.delivery!.smtpResponse), diagnostic: n.delivery!.smtpResponse ?? null,
      })),
    };
  }
  return { kind: 'ignored', reason: `SES ${type ?? 'notification without a type'} is not applied (only Bounce, Complaint and Delivery)` };
}

/** The Message-ID header the mail was sent with: SES quotes it in commonHeaders, and in headers when they are included. */
function originalMessageId(n: { mail: { commonHeaders?: { messageId?: string }; headers?: { name: string; value: string }[] } }): string | null {
  const value = n.mail.commonHeaders?.messageId ?? n.mail.headers?.find((h) => h.name.toLowerCase() === 'message-id')?.value;
  return value?.trim() || null;
}

/** `smtp; 550 5.1.1 user unknown` → 550. */
function smtpCodeOf(text: string | undefined): number | null {
  const m = text ? /(?:^|[;\s])([245]\d\d)(?:[\s-]|$)/.exec(text) : null;
  return m ? Number(m[1]) : null;
}
