// Applies what an SES notification says about each recipient to the email it
// concerns. The email is found by the Message-ID it was sent with (ours is
// `<outbound_messages.id@from-domain>`, so the id inside is looked up by key
// and the whole header must match) and the recipient address. Bounces and
// complaints go to `recordBounces` (suppression, status, events); a Delivery
// changes nothing (the relay node marked the row `sent` when SES took it).
import { sql } from 'drizzle-orm';
import { emails, outboundMessages } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { SesWebhookResult } from '../../contracts/ses.js';
import { recordBounces } from '../delivery/bounces/record.js';
import type { BounceReport } from '../delivery/bounces/report.js';
import type { SesReading } from './ses-notification.js';
import type { OutboxRows } from '../emails/events.js';

type Events = Extract<SesReading, { kind: 'events' }>;
type RecipientResult = NonNullable<SesWebhookResult['recipients']>[number];

const OUR_MESSAGE_ID = /^<([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@[^<>\s]+>$/i;

type EmailRow = { id: string; project_id: string; status: string; address: string };

export interface AppliedNotification {
  recipients: RecipientResult[];
  /** Outbox rows written, by project, for `handOverOutbox`. */
  events: Map<string, OutboxRows>;
}

/** `snsMessageId` makes each recipient's report unique: SNS redelivers with the same MessageId. */
export async function applySesNotification(db: Db, snsMessageId: string, reading: Events): Promise<AppliedNotification> {
  const rows = await emailsOf(db, reading.messageId, reading.events.map((e) => e.address.toLowerCase()));
  const byAddress = new Map<string, EmailRow[]>();
  for (const row of rows) byAddress.set(row.address, [...(byAddress.get(row.address) ?? []), row]);

  const reports: BounceReport[] = [];
  const recipients: RecipientResult[] = [];
  for (const event of reading.events) {
    const matched = byAddress.get(event.address.toLowerCase()) ?? [];
    if (!matched.length) recipients.push({ address: event.address, email_id: null, result: 'unknown_email' });
    for (const row of matched) {
      if (event.type === 'delivery') {
        if (row.status !== 'sent') console.log(`ses: Delivery for email ${row.id} in status ${row.status}; left as it is`);
        recipients.push({ address: event.address, email_id: row.id, result: 'unchanged' });
        continue;
      }
      reports.push({
        emailId: row.id, type: event.type, source: 'ses', sourceRef: `${snsMessageId}:${row.id}`,
        smtpCode: event.smtpCode, status: event.status, diagnostic: event.diagnostic, remoteMta: event.remoteMta,
        feedbackType: event.feedbackType, originalMessageId: reading.messageId,
      });
      recipients.push({ address: event.address, email_id: row.id, result: 'recorded' });
    }
  }
  const { recorded, events } = await recordBounces(db, reports);
  const fresh = new Set(recorded.map((r) => r.emailId));
  for (const r of recipients) if (r.result === 'recorded' && !fresh.has(r.email_id!)) r.result = 'duplicate';
  return { recipients, events };
}

/** The emails of our message `messageId` to any of `addresses` (lower case), by lower-case address. */
async function emailsOf(db: Db, messageId: string | null, addresses: string[]): Promise<EmailRow[]> {
  const id = messageId ? OUR_MESSAGE_ID.exec(messageId)?.[1] : undefined;
  if (!id || !addresses.length) return [];
  const { rows } = await db.execute<EmailRow>(sql`
    select e.id, e.project_id, e.status, lower(e.recipient) as address
    from ${outboundMessages} m join ${emails} e on e.message_id = m.id
    where m.id = ${id.toLowerCase()} and m.message_id = ${messageId}
      and lower(e.recipient) in (select jsonb_array_elements_text(${JSON.stringify(addresses)}::jsonb))`);
  return rows;
}
