// What Amazon SNS posts to `POST /webhooks/ses` (its HTTP(S) delivery format,
// sent as `text/plain`), the SES notification a Notification's `Message`
// carries, and what the route answers. docs/ses.md describes them.
import { z } from '@hono/zod-openapi';

export const SNS_MESSAGE_TYPES = ['SubscriptionConfirmation', 'UnsubscribeConfirmation', 'Notification'] as const;
export type SnsMessageType = (typeof SNS_MESSAGE_TYPES)[number];

const text = (description: string) => z.string().min(1, 'must not be empty').openapi({ description });

const common = {
  MessageId: text('SNS message id; with the recipient, what makes a redelivered notification record once'),
  TopicArn: text('The topic it was published to; must be one of `ses.topic_arns`'),
  Message: z.string().openapi({ description: 'A Notification: the SES notification as JSON text; a confirmation: a human-readable note' }),
  Timestamp: text('When SNS published it (ISO 8601)'),
  SignatureVersion: z.enum(['1', '2'], { error: 'must be "1" (SHA1withRSA) or "2" (SHA256withRSA)' })
    .openapi({ description: '`1`: SHA1withRSA, `2`: SHA256withRSA over the canonical string of the type\'s fields' }),
  Signature: text('Base64 RSA signature'),
  SigningCertURL: text('The signing certificate: https on `sns.<region>.amazonaws.com` (or `.amazonaws.com.cn`) with a `.pem` path'),
};

const confirmation = {
  ...common,
  Token: text('Subscription token'),
  SubscribeURL: text('Fetched to confirm a subscription: https on `sns.<region>.amazonaws.com` (or `.amazonaws.com.cn`)'),
};

export const SnsMessageSchema = z.discriminatedUnion('Type', [
  z.object({ Type: z.literal('SubscriptionConfirmation'), ...confirmation }),
  z.object({ Type: z.literal('UnsubscribeConfirmation'), ...confirmation }),
  z.object({
    Type: z.literal('Notification'),
    ...common,
    Subject: z.string().optional().openapi({ description: 'Signed when present' }),
    UnsubscribeURL: z.string().optional(),
  }),
], { error: (issue) => issue.code === 'invalid_union' ? `must be one of ${SNS_MESSAGE_TYPES.join(', ')}` : undefined })
  .openapi('SnsMessage', { description: 'An Amazon SNS HTTP(S) message (sent as `text/plain`; `application/json` is read the same way)' });
export type SnsMessage = z.infer<typeof SnsMessageSchema>;

// The parts of an SES notification the route reads; SES sends more, ignored.
const Recipient = z.object({ emailAddress: z.string() }).passthrough();
const BouncedRecipient = Recipient.extend({
  status: z.string().optional(),
  diagnosticCode: z.string().optional(),
  action: z.string().optional(),
});

export const SesNotificationSchema = z.object({
  // Identity notifications name it `notificationType`, configuration-set event publishing `eventType`.
  notificationType: z.string().optional(),
  eventType: z.string().optional(),
  mail: z.object({
    messageId: z.string().optional(),
    source: z.string().optional(),
    commonHeaders: z.object({ messageId: z.string().optional() }).passthrough().optional(),
    headers: z.array(z.object({ name: z.string(), value: z.string() })).optional(),
  }).passthrough(),
  bounce: z.object({
    bounceType: z.string(),
    bounceSubType: z.string().optional(),
    bouncedRecipients: z.array(BouncedRecipient),
    reportingMTA: z.string().optional(),
    remoteMtaIp: z.string().optional(),
    feedbackId: z.string().optional(),
  }).passthrough().optional(),
  complaint: z.object({
    complainedRecipients: z.array(Recipient),
    complaintFeedbackType: z.string().optional(),
    feedbackId: z.string().optional(),
  }).passthrough().optional(),
  delivery: z.object({
    recipients: z.array(z.string()),
    smtpResponse: z.string().optional(),
    reportingMTA: z.string().optional(),
  }).passthrough().optional(),
}).passthrough();
export type SesNotification = z.infer<typeof SesNotificationSchema>;

export const SES_RECIPIENT_OUTCOMES = ['recorded', 'duplicate', 'delivered', 'unchanged', 'unknown_email'] as const;

export const SesWebhookResultSchema = z.object({
  outcome: z.enum(['confirmed', 'acknowledged', 'applied', 'ignored']).openapi({
    description: '`confirmed`: the subscription was confirmed (SubscribeURL fetched); `acknowledged`: an UnsubscribeConfirmation, nothing done; `applied`: an SES Bounce, Complaint or Delivery notification, per recipient below; `ignored`: a Notification that is no SES Bounce, Complaint or Delivery (named in `reason`)',
  }),
  reason: z.string().optional(),
  recipients: z.array(z.object({
    address: z.string(),
    email_id: z.uuid().nullable().openapi({ description: 'The email log row it concerns; null when no email of ours matches' }),
    result: z.enum(SES_RECIPIENT_OUTCOMES).openapi({
      description: '`recorded`: a bounce or complaint recorded; `duplicate`: this notification was recorded before (SNS redelivered it); `delivered`: a Delivery recorded on the email; `unchanged`: a Delivery of an email whose status already says as much; `unknown_email`: no email of ours has this Message-ID and recipient',
    }),
  })).optional(),
}).openapi('SesWebhookResult');
export type SesWebhookResult = z.infer<typeof SesWebhookResultSchema>;
