// A message submitted over SMTP (docs/submission.md), handed over by a relay
// node once it has the whole DATA. It goes through the send route's own path:
// the fields are validated by the send route's schema (CR/LF, one mailbox per
// address, reserved headers: no header injection), then `sendMessages` runs
// the same checks in the same one transaction (verified From domain,
// suppressions, plan limits under the project's send lock) and writes the rows
// with `origin = 'smtp'`. Its refusals come back as the SMTP replies a client
// understands; nothing is written for them.
import { sha256Hex, type SubmissionAnswer, type SubmissionRequest } from '@edgemail/shared';
import type { z } from '@hono/zod-openapi';
import { SendMessageSchema, type SendMessageInput } from '../../contracts/send.js';
import { ServiceError } from '../errors.js';
import { sendMessages, type SendContext } from '../emails/send.js';
import { checkSubmissionKey } from './check-key.js';
import { keptHeaders } from './kept-headers.js';
import type { RelayNodeRow } from '../relay-nodes/find.js';

export type Refusal = Extract<SubmissionAnswer, { accepted: false }>;
const refuse = (code: number, text: string): Refusal => ({ accepted: false, code, text });

/**
 * The stream a submitted message names (docs/submission.md, "Streams"):
 * `X-Edgemail-Stream: broadcast` is the API's `stream`, and
 * `X-Edgemail-List-Unsubscribe: one-click` its `list_unsubscribe: true`
 * (`none`: false). Both are taken out: they are instructions, not content.
 * Another value of the second stays a string the schema refuses, by name.
 */
export function streamHeaders(given: Record<string, string>): { headers: Record<string, string>; stream?: string; listUnsubscribe?: boolean | string } {
  const headers: Record<string, string> = {};
  let stream: string | undefined;
  let listUnsubscribe: boolean | string | undefined;
  for (const [name, value] of Object.entries(given)) {
    const lower = name.toLowerCase();
    if (lower === 'x-edgemail-stream') stream = value.trim();
    else if (lower === 'x-edgemail-list-unsubscribe') {
      const v = value.trim().toLowerCase();
      listUnsubscribe = v === 'one-click' ? true : v === 'none' ? false : value;
    } else headers[name] = value;
  }
  return { headers, stream, listUnsubscribe };
}

/** The first problem the send schema found, as `field: problem` (`from: must not contain CR or LF`). */
function firstProblem(error: z.ZodError): { field: string; problem: string } {
  const issue = error.issues[0]!;
  return { field: issue.path.join('.') || 'message', problem: issue.message };
}

/**
 * Writes the submitted message's rows (or answers as the first time, for a
 * spool id seen before) and answers the SMTP verdict.
 *
 * @example const answer = await submitMessage({ db, store, config }, node, request);
 */
export async function submitMessage(
  ctx: Omit<SendContext, 'projectId' | 'sandbox' | 'origin' | 'idempotency'>,
  node: RelayNodeRow,
  request: SubmissionRequest,
): Promise<{ answer: SubmissionAnswer; touch: Promise<unknown> | null }> {
  // Judged again: a key revoked (or expired) since AUTH sends nothing more.
  const key = await checkSubmissionKey(ctx.db, node, request.token, request.client_address);
  if (!key.ok) return { answer: refuse(554, `5.7.8 ${key.message}`), touch: null };

  const parsed = sendInputOf(request.message);
  if (!parsed.ok) return { answer: parsed.refusal, touch: key.touch };

  const sendCtx: SendContext = {
    ...ctx,
    projectId: key.key.projectId,
    sandbox: key.key.sandbox,
    origin: 'smtp',
    idempotency: {
      key: await submissionKey(node.id, request),
      route: 'emails.smtp',
      requestHash: await sha256Hex(JSON.stringify(request.message)),
      sandbox: key.key.sandbox,
    },
  };
  try {
    // The client's Message-ID and Date, when valid, are the sent message's (kept-headers.ts).
    const sent = await sendMessages(sendCtx, [{ input: parsed.input, field: (name) => name, kept: keptHeaders(request) }], ([result]) => result!);
    return {
      answer: { accepted: true, message_id: sent.body.message_id, emails: sent.body.emails.map((e) => ({ id: e.id, recipient: e.recipient, status: e.status })) },
      touch: key.touch,
    };
  } catch (e) {
    if (!(e instanceof ServiceError)) throw e;
    return { answer: smtpRefusal(e), touch: key.touch };
  }
}

/**
 * The send route's input from a submitted message's fields, validated by the
 * send route's own schema, or the SMTP refusal naming the first problem.
 */
export function sendInputOf(message: SubmissionRequest['message']): { ok: true; input: SendMessageInput } | { ok: false; refusal: Refusal } {
  const { headers, stream, listUnsubscribe } = streamHeaders(message.headers);
  const parsed = SendMessageSchema.safeParse({
    from: message.from,
    to: message.to,
    ...(message.cc.length ? { cc: message.cc } : {}),
    ...(message.bcc.length ? { bcc: message.bcc } : {}),
    ...(message.reply_to.length ? { reply_to: message.reply_to } : {}),
    // The API refuses an empty subject; a mail client may send none.
    subject: message.subject.trim() ? message.subject : '(no subject)',
    ...(message.html !== undefined ? { html: message.html } : {}),
    ...(message.text !== undefined ? { text: message.text } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(stream !== undefined ? { stream } : {}),
    ...(listUnsubscribe !== undefined ? { list_unsubscribe: listUnsubscribe } : {}),
    ...(message.attachments.length ? { attachments: message.attachments } : {}),
  });
  if (!parsed.success) {
    const { field, problem } = firstProblem(parsed.error);
    if (field === 'to' && message.to.length === 0) {
      return { ok: false, refusal: refuse(550, '5.6.0 the To header names none of the envelope recipients; a message needs at least one To recipient, as on the API') };
    }
    return { ok: false, refusal: refuse(550, `5.6.0 message refused: ${field}: ${problem}`) };
  }
  return { ok: true, input: parsed.data };
}

/**
 * The Idempotency-Key of a submission (kept 24 hours, as the API's). With a
 * `Message-ID`: the envelope (MAIL FROM and the sorted RCPT TO) and the
 * Message-ID, so a client that sends the message again in a new session
 * (its 250 lost when the node died after the edge committed) gets the first
 * answer and nothing is sent twice; the node's retries of one hand-over carry
 * the same. Without one: the node's spool id, which only the node's own
 * retries repeat. The Message-ID key's U+001F separators are no printable
 * ASCII, so no API Idempotency-Key can spell it.
 */
async function submissionKey(nodeId: string, request: SubmissionRequest): Promise<string> {
  if (request.message_id === undefined) return `smtp:${nodeId}:${request.spool_id}`;
  const envelope = JSON.stringify([request.mail_from, [...request.rcpt_to].sort(), request.message_id]);
  return `smtp\u001fmessage-id\u001f${await sha256Hex(envelope)}`;
}

/** The send's refusals as SMTP replies (spec, "Errors": a plan limit is `452 4.7.0` with the API's message). */
export function smtpRefusal(e: ServiceError): Refusal {
  switch (e.kind) {
    case 'rate_limited':
      return refuse(452, `4.7.0 ${e.message}`);
    case 'invalid': {
      const from = e.fields?.from;
      if (from) return refuse(550, `5.7.1 ${from}`);
      if (e.fields && Object.keys(e.fields).some((f) => f.startsWith('attachments'))) return refuse(552, `5.3.4 ${e.message}`);
      return refuse(550, `5.6.0 ${e.message}`);
    }
    case 'conflict':
      // The same Message-ID and envelope (or the same spool id) within 24 hours, with other content.
      return refuse(554, '5.6.0 a message with this Message-ID and envelope was submitted in the last 24 hours with other content; give a new message a Message-ID of its own');
    default:
      throw e;
  }
}
