// The forward action (docs/inbound-rules.md, "Forward"): after ingest has
// stored a message that a `forward` rule decided, a copy goes out as a new
// email of the project through the ordinary sending path (plan limits,
// suppressions, DKIM of the project's domain, the email log), origin
// `forward`. From is the address the mail was received at (a domain of the
// project, which has the key that signs it), Reply-To the original From; the
// envelope sender is an SRS address (srs.ts), and a hop header stops loops
// (forward-limits.ts). What became of the forward is the record's
// `status_reason`; the record stays `received`.
import { eq } from 'drizzle-orm';
import { inboundEmails, type InboundAttachment } from '@edgemail/schema';
import { splitAddress, toBase64, type Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import type { InboundMeta } from '../../contracts/inbound-meta.js';
import { SendMessageSchema } from '../../contracts/send.js';
import { ServiceError } from '../errors.js';
import { sendMessages } from '../emails/send.js';
import { bounceDomain } from '../delivery/bounces/verp.js';
import { attachmentKey } from '../inbound-emails/storage-keys.js';
import { FORWARD_RETURN_PATH_HEADER, hopsOf, HOP_HEADER, loopReason } from './forward-limits.js';
import { srsAddress } from './srs.js';

/** A stored record whose rule forwards it. */
export interface ForwardTask {
  recordId: string;
  projectId: string;
  ruleId: string;
  forwardTo: string;
  /** The project's recipient the message was received at: the copy's From. */
  receivedAt: string;
  meta: InboundMeta;
  /** The attachments stored with the record (none when only the raw message was kept). */
  attachments: InboundAttachment[];
}


const oneLine = (s: string, max: number) => s.replace(/[\x00-\x1f\x7f]+/g, ' ').trim().slice(0, max);
const bareOf = (header: string) => (/<([^<>\s]+@[^<>\s]+)>/.exec(header)?.[1] ?? header).trim();

/** The forwards of the records an ingest inserted: those a `forward` rule decided and stored `received`. */
export function forwardTasks(plans: { id: string; status: string; share: { projectId: string; recipients: string[] }; route?: { action: string; rule: { id: string; forwardTo: string | null } | null } }[],
  inserted: (plan: { id: string; share: { projectId: string } }) => boolean, meta: InboundMeta, attachments: InboundAttachment[]): ForwardTask[] {
  return plans.flatMap((p) => (p.route?.action === 'forward' && p.route.rule?.forwardTo && p.status === 'received' && inserted(p)
    ? [{ recordId: p.id, projectId: p.share.projectId, ruleId: p.route.rule.id, forwardTo: p.route.rule.forwardTo, receivedAt: p.share.recipients[0]!, meta, attachments }]
    : []));
}

/** Runs each forward; a failure is written on its record, never thrown (ingest is already committed). */
export async function runForwards(db: Db, store: R2Bucket, config: Config, tasks: ForwardTask[]): Promise<void> {
  for (const task of tasks) {
    let reason: string;
    try {
      reason = await forwardOne(db, store, config, task);
    } catch (e) {
      reason = `forward to ${task.forwardTo} failed: ${e instanceof ServiceError || e instanceof Error ? e.message : String(e)}`;
      console.error(`inbound ${task.recordId}: ${reason}`);
    }
    await db.update(inboundEmails).set({ statusReason: reason }).where(eq(inboundEmails.id, task.recordId));
  }
}

async function forwardOne(db: Db, store: R2Bucket, config: Config, task: ForwardTask): Promise<string> {
  const { meta } = task;
  const headers = meta.parsed.headers;
  const repeated = (meta.parsed as { repeated_headers?: Record<string, string[]> }).repeated_headers ?? {};
  const by = `inbound rule ${task.ruleId}`;
  // A bounce (null sender) is never forwarded: it may be the answer to a forward of ours.
  if (!meta.mail_from) return `not forwarded by ${by}: null sender (a bounce is never forwarded)`;
  const loop = loopReason(headers, repeated);
  if (loop) {
    console.warn(`inbound ${task.recordId}: not forwarded to ${task.forwardTo}: ${loop}`);
    return `not forwarded by ${by}: ${loop}`;
  }
  const originalFrom = oneLine(headers.from ?? meta.mail_from, 900);
  const replyTo = splitAddress(bareOf(originalFrom)) ? bareOf(originalFrom) : meta.mail_from;
  const name = oneLine(originalFrom.replace(/<[^>]*>/g, '').replace(/["\\]/g, '') || replyTo, 60);
  const files = await Promise.all(task.attachments.map(async (a, i) => {
    const object = await store.get(attachmentKey(task.projectId, meta.spool_id, i));
    if (!object) throw new Error(`attachment ${i} (${a.filename}) is missing from storage`);
    return { filename: a.filename || `attachment-${i + 1}`, content_type: a.content_type, content: toBase64(new Uint8Array(await object.arrayBuffer())) };
  }));
  const body = {
    from: `"${name} via ${task.receivedAt}" <${task.receivedAt}>`,
    to: task.forwardTo,
    reply_to: replyTo,
    subject: oneLine(meta.parsed.subject, 998) || '(no subject)',
    ...(meta.parsed.html ? { html: meta.parsed.html } : {}),
    text: meta.parsed.text || (meta.parsed.html ? undefined : ' '),
    headers: {
      [HOP_HEADER]: String(hopsOf(headers) + 1),
      'X-Original-From': originalFrom,
      'X-Forwarded-For': `${task.receivedAt} ${task.forwardTo}`,
      'X-Edgemail-Inbound-Id': task.recordId,
    },
    ...(files.length ? { attachments: files } : {}),
  };
  const parsed = SendMessageSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return `not forwarded by ${by}: the copy is not a valid message: ${issue.path.join('.')}: ${issue.message}`;
  }
  const srs = await srsAddress(config, meta.mail_from, bounceDomain(config) ?? splitAddress(task.receivedAt)!.domain.toLowerCase());
  const input = { ...parsed.data, headers: { ...parsed.data.headers, ...(srs ? { [FORWARD_RETURN_PATH_HEADER]: srs } : {}) } };
  const { body: results } = await sendMessages({ db, store, config, projectId: task.projectId, sandbox: false, origin: 'forward' },
    [{ input, field: (n) => `forward_to.${n}` }], (r) => r);
  const email = results[0]!.emails[0]!;
  return `forwarded by ${by} to ${task.forwardTo}: email ${email.id} (${email.status})`;
}
