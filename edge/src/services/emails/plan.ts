// A validated send turned into the rows it will write and the answer it will
// give, before anything is written: ids are made here, so the answer (and the
// idempotency record holding it) goes into the same transaction as the rows.
// Whether a recipient is suppressed is read in that transaction, so each
// recipient is planned with both outcomes (`outcome`) and the SQL picks one.
import type { OutboundAttachment } from '@edgemail/schema';
import { base64DecodedSize } from '@edgemail/shared';
import type { EmailRecord, EmailStatus, RecipientKind, SendResult } from '../../contracts/email.js';
import { attachmentContentType, type Mailbox, type SendMessageInput } from '../../contracts/send.js';
import { domainOfAddress } from '../domains/sendable.js';
import { outboundAttachmentKey } from './storage-keys.js';

export const SUPPRESSED_MESSAGE = 'recipient is suppressed';
/**
 * Stands for the suppression's reason in a planned suppressed row and answer:
 * the statement, which reads the reason, writes it in its place (an enum
 * value: no character JSON would escape). Only our own text carries it.
 */
export const REASON_SLOT = '{reason}';
/** A suppressed row's `error_message`: `recipient is suppressed (hard_bounce)`. */
export const suppressedMessage = (reason: string) => `${SUPPRESSED_MESSAGE} (${reason})`;

export interface Recipient { mailbox: Mailbox; kind: RecipientKind }

/**
 * The message's recipients in the order to, cc, bcc, each address once (the
 * first mention wins: an address in both `to` and `bcc` gets one copy, as
 * `to`); compared case-insensitively.
 */
export function recipientsOf(input: SendMessageInput): Recipient[] {
  const seen = new Set<string>();
  const out: Recipient[] = [];
  const lists: [RecipientKind, Mailbox[] | undefined][] = [['to', input.to], ['cc', input.cc], ['bcc', input.bcc]];
  for (const [kind, list] of lists) {
    for (const mailbox of list ?? []) {
      if (seen.has(mailbox.key)) continue;
      seen.add(mailbox.key);
      out.push({ mailbox, kind });
    }
  }
  return out;
}

/** Total decoded size of a message's attachments. */
export const attachmentBytes = (input: SendMessageInput) =>
  (input.attachments ?? []).reduce((n, a) => n + base64DecodedSize(a.content), 0);

export interface PlannedEmail { id: string; recipient: Recipient }

/** A message with its content settled: its own subject, or the one its template rendered. */
export type ComposedMessage = SendMessageInput & { subject: string };

/** Where a send came from (`outbound_messages.origin`): the API, SMTP submission, a template's send-test, or an inbound rule's forward. */
export type SendOrigin = 'api' | 'smtp' | 'test' | 'forward';

/** The template and version a message was rendered from. */
export interface RenderedFrom { templateId: string; versionId: string }

/**
 * A submitted message's own `Message-ID` (`<left@right>`) and `Date` (RFC 5322
 * text), each checked valid by the submission: the sent message carries them
 * instead of ones written anew (threading in mail clients depends on them).
 */
export interface KeptHeaders {
  messageId?: string;
  date?: string;
  /** The message's id when the caller already named it (a relay node's 250 for an SMTP submission); else a new one. */
  id?: string;
}

/** Where the kept `Date` rides in the row's `headers` until the job is built (jobs.ts takes it out). */
export const KEPT_DATE_HEADER = 'Date';

export interface MessagePlan {
  id: string;
  /** The message stream (docs/sending.md, "Streams") and whether it carries one-click unsubscribe. */
  stream: string;
  listUnsubscribe: boolean;
  kept: KeptHeaders | null;
  projectId: string;
  input: ComposedMessage;
  template: RenderedFrom | null;
  /** The from address's domain (null without one, which no domain row matches). */
  domainName: string | null;
  sandbox: boolean;
  origin: SendOrigin;
  createdAt: Date;
  /** `send_at` as given (null when not scheduled). */
  sendAt: Date | null;
  emails: PlannedEmail[];
  attachments: OutboundAttachment[];
}

/** What a recipient's row says: `suppressed` when the project suppresses the address, else `queued` (`captured` from a sandbox key). */
export interface Outcome { status: EmailStatus; errorMessage: string | null }

export function outcome(plan: MessagePlan, suppressed: boolean, reason = REASON_SLOT): Outcome {
  if (suppressed) return { status: 'suppressed', errorMessage: suppressedMessage(reason) };
  return { status: plan.sandbox ? 'captured' : 'queued', errorMessage: null };
}

/** @param sandbox sent with a sandbox key: `captured`, never queued */
export function planMessage(input: ComposedMessage, opts: { projectId: string; sandbox: boolean; createdAt: Date; origin?: SendOrigin; template?: RenderedFrom | null; kept?: KeptHeaders; broadcastKind?: boolean }): MessagePlan {
  const id = opts.kept?.id ?? crypto.randomUUID();
  const emails = recipientsOf(input).map((recipient): PlannedEmail => ({ id: crypto.randomUUID(), recipient }));
  const attachments = (input.attachments ?? []).map((a, i): OutboundAttachment => ({
    filename: a.filename,
    content_type: attachmentContentType(a.filename, a.content_type?.trim()),
    size: base64DecodedSize(a.content),
    r2_key: outboundAttachmentKey(opts.projectId, id, i),
  }));
  return {
    id, stream: input.stream ?? 'transactional', listUnsubscribe: opts.broadcastKind || (input.list_unsubscribe ?? input.stream === 'broadcast'),
    kept: opts.kept ?? null, projectId: opts.projectId, input, template: opts.template ?? null, domainName: domainOfAddress(input.from.key),
    sandbox: opts.sandbox, origin: opts.origin ?? 'api', createdAt: opts.createdAt, sendAt: input.send_at ? new Date(input.send_at) : null, emails, attachments,
  };
}

/**
 * What a recipient's suppression is looked up by: the stream, a space, the
 * address key (a stream name has no space, so the split is unambiguous). A
 * suppression of every stream or of this one hits it.
 */
export const suppressionKey = (plan: Pick<MessagePlan, 'stream'>, e: PlannedEmail) => `${plan.stream} ${e.recipient.mailbox.key}`;

/** Recipients the plan limits count: every row but the suppressed ones. */
export const countable = (plans: MessagePlan[], suppressed: ReadonlyMap<string, string>) =>
  plans.reduce((n, p) => n + p.emails.filter((e) => !suppressed.has(suppressionKey(p, e))).length, 0);

/** The `outbound_messages` row, as `jsonb_to_recordset` reads it; the domain's id is looked up by `domain_name`. */
export function messageRow(plan: MessagePlan) {
  const { input } = plan;
  return {
    id: plan.id,
    domain_name: plan.domainName,
    message_id: plan.kept?.messageId ?? `<${plan.id}@${plan.domainName}>`,
    from: input.from.display,
    to: input.to.map((m) => m.display),
    cc: (input.cc ?? []).map((m) => m.display),
    bcc: (input.bcc ?? []).map((m) => m.display),
    reply_to: (input.reply_to ?? []).map((m) => m.display),
    subject: input.subject,
    html: input.html ?? null,
    text: input.text ?? null,
    // The send's own tracking (docs/tracking.md); null leaves it to the from-domain's setting.
    tracking: input.tracking ?? null,
    // A custom header is never `Date` (the send schema reserves it), so this key is only ever the kept one.
    headers: plan.kept?.date ? { ...input.headers, [KEPT_DATE_HEADER]: plan.kept.date } : input.headers ?? {},
    attachments: plan.attachments,
    tags: input.tags ?? [],
    sandbox: plan.sandbox,
    origin: plan.origin,
    template_id: plan.template?.templateId ?? null,
    template_version_id: plan.template?.versionId ?? null,
    send_at: plan.sendAt?.toISOString() ?? null,
    created_at: plan.createdAt.toISOString(),
    stream: plan.stream,
    list_unsubscribe: plan.listUnsubscribe,
  };
}

/**
 * The `emails` rows, as `jsonb_to_recordset` reads them: `address` is the
 * suppression look-up's key; `status`, `error_message` and `next_attempt_at`
 * are the row not suppressed, the `suppressed_` ones the row suppressed. A
 * queued row is due at once, or at `send_at` when that is later: the claim
 * hands out nothing before its `next_attempt_at`.
 */
export function emailRows(plan: MessagePlan) {
  const at = plan.createdAt.toISOString();
  const due = plan.sendAt && plan.sendAt > plan.createdAt ? plan.sendAt.toISOString() : at;
  const columns = (o: Outcome) => ({ status: o.status, error_message: o.errorMessage, next_attempt_at: o.status === 'queued' ? due : null });
  const [plain, suppressed] = [columns(outcome(plan, false)), columns(outcome(plan, true))];
  return plan.emails.map((e) => ({
    id: e.id,
    message_id: plan.id,
    address: e.recipient.mailbox.key,
    skey: suppressionKey(plan, e),
    stream: plan.stream,
    recipient: e.recipient.mailbox.address,
    kind: e.recipient.kind,
    ...plain,
    suppressed_status: suppressed.status,
    suppressed_error_message: suppressed.error_message,
    suppressed_next_attempt_at: suppressed.next_attempt_at,
    created_at: at,
  }));
}

/**
 * The answer for one message: the records the log will show for its rows once
 * written, each with the outcome `outcomeOf` gives it.
 */
export function answerOf(plan: MessagePlan, outcomeOf: (email: PlannedEmail) => Outcome): SendResult {
  const message = messageRow(plan);
  return {
    message_id: plan.id,
    emails: plan.emails.map((e): EmailRecord => {
      const { status, errorMessage } = outcomeOf(e);
      return {
        id: e.id, message_id: plan.id, project_id: plan.projectId, from: message.from,
        recipient: e.recipient.mailbox.address, kind: e.recipient.kind, to: message.to, cc: message.cc,
        subject: message.subject, status, attempts: 0, error_message: errorMessage, smtp_reply: null,
        node_id: null, tags: message.tags, headers: message.headers, sandbox: plan.sandbox, origin: plan.origin, stream: plan.stream,
        send_at: message.send_at, created_at: message.created_at, sent_at: null,
      };
    }),
  };
}

/** The answer once the suppressed addresses (lower case) and their reasons are known. */
export const settledAnswerOf = (plan: MessagePlan, suppressed: ReadonlyMap<string, string>): SendResult =>
  answerOf(plan, (e) => outcome(plan, suppressed.has(suppressionKey(plan, e)), suppressed.get(suppressionKey(plan, e))));
