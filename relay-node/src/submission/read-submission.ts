// A submitted message read into the send route's fields (docs/submission.md,
// "From MIME to the send's fields"). The message is not relayed as it came:
// the edge validates these fields with the send route's schema and the
// outbound path composes (and DKIM-signs) the message from them, as for an
// API send. So nothing the client wrote reaches a header unchecked.
import type { Readable } from 'node:stream';
import { simpleParser, type AddressObject, type EmailAddress, type ParsedMail } from 'mailparser';
import type { SubmissionMessage } from '@edgemail/shared';
import { headerValues } from '../smtp/header-values.js';

/**
 * Headers not kept as custom headers: those the composition writes itself
 * (from the fields above, or anew: Date, Message-ID, MIME and Content-*), and
 * the trace and authentication headers only the servers on the way may write
 * (a Postfix smarthost client adds its own Received). The same names the send
 * route refuses as custom headers.
 */
const NOT_KEPT = new Set([
  'from', 'sender', 'to', 'cc', 'bcc', 'subject', 'date', 'message-id', 'reply-to', 'mime-version',
  'dkim-signature', 'received', 'return-path', 'authentication-results', 'received-spf',
]);
const notKept = (name: string) => NOT_KEPT.has(name) || /^(content-|resent-|arc-)/.test(name);

/** Every mailbox of an address header, groups flattened. */
function mailboxes(header: AddressObject | AddressObject[] | undefined): EmailAddress[] {
  const objects = header === undefined ? [] : Array.isArray(header) ? header : [header];
  const flat = (list: EmailAddress[]): EmailAddress[] => list.flatMap((a) => (a.group ? flat(a.group) : a.address ? [a] : []));
  return objects.flatMap((o) => flat(o.value));
}

/** `"Name" <address>` (quoted as RFC 5322 quotes, which the send route's parser reads back), or the bare address. */
export function mailboxText(mailbox: EmailAddress): string {
  const name = (mailbox.name ?? '').trim();
  return name ? `${JSON.stringify(name)} <${mailbox.address}>` : mailbox.address!;
}

/**
 * The send's fields from the message and its envelope. To and Cc keep the
 * header's addresses that are envelope recipients, in the header's order; an
 * address a header names but the envelope does not is left out (it was not
 * asked to receive the message); the envelope's other recipients become Bcc.
 *
 * @param rcptTo the envelope recipients
 */
export async function readSubmission(input: Readable, rcptTo: string[]): Promise<SubmissionMessage> {
  return (await readSubmissionAndId(input, rcptTo)).message;
}

/**
 * As `readSubmission`, with the message's `Message-ID` and `Date` as the
 * client wrote them (null without one): the edge recognises a message sent
 * again by its Message-ID and envelope, and the sent message keeps both when
 * they are valid (the edge judges; docs/submission.md, "Kept as written").
 */
export async function readSubmissionAndId(input: Readable, rcptTo: string[]): Promise<{ message: SubmissionMessage; messageId: string | null; date: string | null }> {
  const mail = await simpleParser(input, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  const messageId = mail.messageId?.trim().slice(0, 998) || null;
  const dateLine = mail.headerLines.find((h) => h.key === 'date')?.line;
  const date = dateLine ? dateLine.slice(dateLine.indexOf(':') + 1).replace(/\r?\n[ \t]*/g, ' ').trim().slice(0, 998) || null : null;
  return { message: fieldsOf(mail, rcptTo), messageId, date };
}

function fieldsOf(mail: ParsedMail, rcptTo: string[]): SubmissionMessage {
  const envelope = new Map(rcptTo.map((a) => [a.toLowerCase(), a]));
  const taken = new Set<string>();
  const pick = (header: AddressObject | AddressObject[] | undefined): string[] => mailboxes(header).flatMap((m) => {
    const key = m.address!.toLowerCase();
    if (!envelope.has(key) || taken.has(key)) return [];
    taken.add(key);
    return [mailboxText(m)];
  });
  const to = pick(mail.to);
  const cc = pick(mail.cc);
  const bcc = [...envelope].filter(([key]) => !taken.has(key)).map(([, address]) => address);

  const from = mailboxes(mail.from);
  const { headers: values } = headerValues(mail.headerLines);
  const names = new Map(mail.headerLines.map(({ key, line }) => [key, line.slice(0, Math.max(0, line.indexOf(':'))).trim() || key]));
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) if (!notKept(key)) headers[names.get(key) ?? key] = value;

  return {
    // Several From mailboxes (or none) are refused by the edge as the send route refuses them.
    from: from.length === 1 ? mailboxText(from[0]!) : from.map(mailboxText).join(', '),
    to,
    cc,
    bcc,
    reply_to: mailboxes(mail.replyTo).map(mailboxText),
    subject: mail.subject ?? '',
    ...(typeof mail.html === 'string' && mail.html ? { html: mail.html } : {}),
    ...(mail.text ? { text: mail.text } : {}),
    headers,
    attachments: mail.attachments.map((a) => ({
      filename: a.filename || 'attachment',
      content_type: a.contentType || 'application/octet-stream',
      content: a.content.toString('base64'),
    })),
  };
}
