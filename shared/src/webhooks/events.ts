// Webhook event types and their envelopes: what a receiver gets in the body
// of every delivery (docs/webhooks.md).

/** Every event type a webhook may subscribe to; `*` subscribes to all of them. */
export const WEBHOOK_EVENT_TYPES = ['email.sent', 'email.failed', 'inbound.received', 'email.bounced', 'email.complained', 'email.opened', 'email.clicked', 'email.unsubscribed', 'project.complaint_threshold_crossed', 'webhook.disabled'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (text: string): text is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(text);

/** `data.tracking` of `email.opened` / `email.clicked` (docs/tracking.md). */
export interface TrackingEventDetail {
  /** RFC 3339: when the pixel was fetched or the link followed. */
  at: string;
  /** `browser`, `mobile_browser`, `mail_client`, `mail_proxy`, `apple_proxy`, `scanner`, `bot`, `none`, `unknown`. */
  user_agent_class: string;
  /** A machine's request (a privacy proxy, a scanner, a prefetch): never counted as a human open or click. */
  machine: boolean;
  /** Why it is a machine's: `head_request`, `no_user_agent`, `apple_privacy_proxy`, `security_scanner`, `bot`, `too_soon_after_delivery`; null for a human's. */
  machine_reason: string | null;
  /** `email.clicked`: the link followed (its URL as in the message, and its index among the tracked links). */
  link?: { url: string; index: number };
}

/** `data` of `email.opened` / `email.clicked`: the email's fields and what happened. */
export interface EmailTrackingEventData extends EmailEventData {
  tracking: TrackingEventDetail;
}

export type EmailOpenedEvent = WebhookEnvelope<EmailTrackingEventData> & { event: 'email.opened' };
export type EmailClickedEvent = WebhookEnvelope<EmailTrackingEventData> & { event: 'email.clicked' };

/** The body of every delivery. */
export interface WebhookEnvelope<D = Record<string, unknown>> {
  event: WebhookEventType;
  /** RFC 3339: when the event happened (the same on every attempt). */
  timestamp: string;
  data: D;
}

/** `data` of `email.sent` and `email.failed`: one outbound email, as the spec names its fields. */
export interface EmailEventData {
  /** Internal to the service; correlate through a custom header read from the email log. */
  id: string;
  project_id: string;
  sender: string;
  recipients: string[];
  subject: string;
  status: string;
  /** The receiving server's reply or the reason it failed; `email.failed` only. */
  error_message?: string;
  attempts: number;
  /** The message stream (`transactional`, `broadcast` or a project-defined one; docs/sending.md, "Streams"). */
  stream?: string;
}

/** `data.unsubscribe` of `email.unsubscribed` (docs/sending.md, "One-click unsubscribe"). */
export interface UnsubscribeEventDetail {
  /** `one_click` (the HTTPS link, RFC 8058) or `mailto`. */
  method: 'one_click' | 'mailto';
  /** The stream the address is now suppressed for. */
  stream: string;
  created_at: string;
}

/** `data` of `email.unsubscribed`: the email's fields and the unsubscribe. */
export interface EmailUnsubscribeEventData extends EmailEventData {
  unsubscribe: UnsubscribeEventDetail;
}

/** `data` of `project.complaint_threshold_crossed` (docs/analytics.md, "Sender health"). */
export interface ComplaintThresholdEventData {
  project_id: string;
  /** Complaints per delivered email over the trailing 7 days (0.004 = 0.4%). */
  complaint_rate: number;
  /** `sending.complaint_threshold_basis_points` as a rate (0.003 = 0.3%). */
  threshold: number;
  complaints: number;
  delivered: number;
  /** The UTC days counted, `YYYY-MM-DD`. */
  window: { from: string; to: string };
}

/** `data` of `webhook.disabled`, sent to the project's other webhooks when one is disabled (docs/webhooks.md, "Automatic disable"). */
export interface WebhookDisabledEventData {
  project_id: string;
  /** The webhook disabled (`GET /api/v1/webhooks`). */
  webhook_id: string;
  url: string;
  /** RFC 3339. */
  disabled_at: string;
  reason: string;
  /** RFC 3339: the first failed attempt after the last success. */
  failing_since: string;
  /** Failed attempts since then. */
  consecutive_failures: number;
}

export type EmailSentEvent = WebhookEnvelope<EmailEventData> & { event: 'email.sent' };
export type EmailFailedEvent = WebhookEnvelope<EmailEventData & { error_message: string }> & { event: 'email.failed' };

/** The bounce or complaint an `email.bounced` / `email.complained` event reports (docs/bounces.md). */
export interface BounceEventDetail {
  /** The bounce record (`GET /api/v1/bounces/{id}`). */
  id: string;
  /** `hard` on `email.bounced`, `complaint` on `email.complained`. */
  type: 'hard' | 'soft' | 'complaint';
  /** `dsn`, `arf`, `ses`, `simulator` (`smtp` records are reported by `email.failed`). */
  source: string;
  smtp_code: number | null;
  /** Enhanced status code, `5.1.1`. */
  status: string | null;
  diagnostic: string | null;
  remote_mta: string | null;
  /** ARF `Feedback-Type` of a complaint (`abuse`, …). */
  feedback_type: string | null;
  original_message_id: string | null;
  created_at: string;
}

/** `data` of `email.bounced` / `email.complained`: the email's fields (status after the report) and the bounce. */
export interface EmailBounceEventData extends EmailEventData {
  bounce: BounceEventDetail;
}

export type EmailBouncedEvent = WebhookEnvelope<EmailBounceEventData> & { event: 'email.bounced' };
export type EmailComplainedEvent = WebhookEnvelope<EmailBounceEventData> & { event: 'email.complained' };

/** The envelope bytes a delivery sends, built one way everywhere. */
export const envelopeBody = (event: string, at: Date, data: unknown): string =>
  JSON.stringify({ event, timestamp: at.toISOString(), data });
