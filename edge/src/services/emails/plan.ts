// A validated send turned into the rows it will write and the answer it will
// give, before anything is written: ids are made here, so the answer (and the
// idempotency record holding it) goes into the same transaction as the rows.
import type { OutboundAttachment } from '@edgemail/schema';
import { base64DecodedSize } from '@edgemail/shared';
import type { EmailRecord, EmailStatus, RecipientKind, SendResult } from '../../contracts/email.js';
import { attachmentContentType, type Mailbox, type SendMessageInput } from '../../contracts/send.js';
import { outboundAttachmentKey } from './storage-keys.js';

export const SUPPRESSED_MESSAGE = 'recipient is suppressed';

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

export interface PlannedEmail { id: string; recipient: Recipient; status: EmailStatus; errorMessage: string | null }

export interface MessagePlan {
  id: string;
  projectId: string;
  input: SendMessageInput;
  domain: { id: string; name: string };
  sandbox: boolean;
  createdAt: Date;
  emails: PlannedEmail[];
  attachments: OutboundAttachment[];
}

/**
 * @param suppressed the project's suppressed addresses among the recipients (lower case)
 * @param sandbox    sent with a sandbox key: `captured`, never queued
 */
export function planMessage(input: SendMessageInput, opts: {
  projectId: string; domain: { id: string; name: string }; suppressed: ReadonlySet<string>; sandbox: boolean; createdAt: Date;
}): MessagePlan {
  const id = crypto.randomUUID();
  const emails = recipientsOf(input).map((recipient): PlannedEmail => {
    if (opts.suppressed.has(recipient.mailbox.key)) return { id: crypto.randomUUID(), recipient, status: 'suppressed', errorMessage: SUPPRESSED_MESSAGE };
    return { id: crypto.randomUUID(), recipient, status: opts.sandbox ? 'captured' : 'queued', errorMessage: null };
  });
  const attachments = (input.attachments ?? []).map((a, i): OutboundAttachment => ({
    filename: a.filename,
    content_type: attachmentContentType(a.filename, a.content_type?.trim()),
    size: base64DecodedSize(a.content),
    r2_key: outboundAttachmentKey(opts.projectId, id, i),
  }));
  return { id, projectId: opts.projectId, input, domain: opts.domain, sandbox: opts.sandbox, createdAt: opts.createdAt, emails, attachments };
}

/** Recipients the plan limits count: every row but the suppressed ones. */
export const countable = (plans: MessagePlan[]) =>
  plans.reduce((n, p) => n + p.emails.filter((e) => e.status !== 'suppressed').length, 0);


/** The `outbound_messages` row, as `jsonb_to_recordset` reads it. */
export function messageRow(plan: MessagePlan) {
  const { input } = plan;
  return {
    id: plan.id,
    domain_id: plan.domain.id,
    message_id: `<${plan.id}@${plan.domain.name}>`,
    from: input.from.display,
    to: input.to.map((m) => m.display),
    cc: (input.cc ?? []).map((m) => m.display),
    bcc: (input.bcc ?? []).map((m) => m.display),
    reply_to: (input.reply_to ?? []).map((m) => m.display),
    subject: input.subject,
    html: input.html ?? null,
    text: input.text ?? null,
    headers: input.headers ?? {},
    attachments: plan.attachments,
    tags: input.tags ?? [],
    sandbox: plan.sandbox,
    created_at: plan.createdAt.toISOString(),
  };
}

/** The `emails` rows, as `jsonb_to_recordset` reads them. A queued row is due at once. */
export function emailRows(plan: MessagePlan) {
  const at = plan.createdAt.toISOString();
  return plan.emails.map((e) => ({
    id: e.id,
    message_id: plan.id,
    recipient: e.recipient.mailbox.address,
    kind: e.recipient.kind,
    status: e.status,
    next_attempt_at: e.status === 'queued' ? at : null,
    error_message: e.errorMessage,
    created_at: at,
  }));
}

/** The answer for one message: the records the log will show for its rows once written. */
export function answerOf(plan: MessagePlan): SendResult {
  const message = messageRow(plan);
  return {
    message_id: plan.id,
    emails: plan.emails.map((e): EmailRecord => ({
      id: e.id, message_id: plan.id, project_id: plan.projectId, from: message.from,
      recipient: e.recipient.mailbox.address, kind: e.recipient.kind, to: message.to, cc: message.cc,
      subject: message.subject, status: e.status, attempts: 0, error_message: e.errorMessage, smtp_reply: null,
      node_id: null, tags: message.tags, headers: message.headers, sandbox: plan.sandbox,
      created_at: message.created_at, sent_at: null,
    })),
  };
}
