// Claimed rows to jobs (docs/sending.md, "Relay protocol: outbound"): the
// message as the node composes it, attachments read from R2, the domain's
// DKIM key unsealed, the route. A recipient whose job cannot be made is not
// handed out: failed when it never can be (no key, a missing attachment),
// returned to the queue when it may later (storage unavailable).
import type { OutboundAttachment } from '@edgemail/schema';
import { toBase64, type Config } from '@edgemail/shared';
import { SealError } from '../../crypto/seal.js';
import type { OutboundJobSchema } from '../../contracts/relay-outbound.js';
import { dkimForJob, domainOfAddress, type JobDkim } from '../domains/sendable.js';
import type { ClaimedRow, SmtpServerRow } from './claim.js';
import { KEPT_DATE_HEADER } from '../emails/plan.js';
import { FORWARD_RETURN_PATH_HEADER } from '../inbound-rules/forward-limits.js';
import { chooseRoute, RoutePasswordError } from './route.js';
import { verpAddress } from './bounces/verp.js';
import { listUnsubscribeHeaders } from '../unsubscribe/headers.js';
import { trackedHtml } from '../tracking/job-html.js';
import type { z } from '@hono/zod-openapi';

export type OutboundJob = z.infer<typeof OutboundJobSchema>;

/** A recipient that can never be sent as it is: failed with `problem` as its error message; `detail`, when set, is for the edge's log instead. */
export interface JobFailure { id: string; problem: string; detail?: string }

export interface BuiltJobs {
  jobs: OutboundJob[];
  failures: JobFailure[];
  /** Recipients to return to the queue (a transient problem of this claim). */
  released: { id: string; problem: string }[];
}

/** A reason a job cannot be made; `permanent` fails the recipient, otherwise it goes back to the queue. */
class JobProblem extends Error {
  constructor(message: string, readonly permanent: boolean, readonly detail?: string) {
    super(message);
  }
}

type Settings = Pick<Config, 'database.crypto.encryption_key' | 'server.public_url'>;

/** The row with its one-click unsubscribe headers among its custom headers (signed with them by the node). */
async function withUnsubscribe(settings: Settings, row: ClaimedRow): Promise<ClaimedRow> {
  if (!row.list_unsubscribe) return row;
  return { ...row, headers: { ...row.headers, ...await listUnsubscribeHeaders(settings, row) } };
}

/**
 * @param store `MAIL_STORE` (attachments under `outbound_messages.attachments[].r2_key`)
 */
export async function buildJobs(settings: Settings, store: R2Bucket, claimed: ClaimedRow[], pool: SmtpServerRow[]): Promise<BuiltJobs> {
  const rows = await Promise.all(claimed.map((row) => withUnsubscribe(settings, row)));
  // Per claim, each message's attachments are read once and each domain's key opened once.
  const attachments = new Map<string, Promise<OutboundJob['message']['attachments']>>();
  const keys = new Map<string, Promise<JobDkim>>();
  const built = await Promise.all(rows.map(async (row) => {
    try {
      let files = attachments.get(row.message_row_id);
      if (!files) {
        files = readAttachments(store, row.attachments);
        attachments.set(row.message_row_id, files);
      }
      const keyName = row.domain_name ?? `message:${row.message_row_id}`;
      let key = keys.get(keyName);
      if (!key) {
        key = signingKey(settings, row);
        keys.set(keyName, key);
      }
      const [dkim, route, content] = await Promise.all([key, routeOf(settings, row, pool), files]);
      // Bounces come back to the VERP return path on MX routes only: a project's or the pool's SMTP
      // server (SES, a provider) may refuse a foreign MAIL FROM, and reports its bounces its own way.
      // A forward (inbound rules) carries its SRS envelope sender instead, so a receiver's SPF check
      // sees our domain and a bounce never goes back to the original sender's domain unmarked.
      const srs = row.origin === 'forward' ? row.headers[FORWARD_RETURN_PATH_HEADER] ?? null : null;
      const returnPath = route.kind === 'mx' ? srs ?? await verpAddress(settings, row.id) : null;
      // Tracking rewrites this recipient's HTML here, before the node composes and DKIM-signs it.
      return { job: jobOf({ ...row, html: await trackedHtml(settings, row) }, dkim, route, content, returnPath) };
    } catch (e) {
      if (e instanceof JobProblem) return { problem: { id: row.id, problem: e.message, ...(e.detail ? { detail: e.detail } : {}) }, permanent: e.permanent };
      return { problem: { id: row.id, problem: e instanceof Error ? e.message : String(e) }, permanent: false };
    }
  }));
  const out: BuiltJobs = { jobs: [], failures: [], released: [] };
  for (const b of built) {
    if ('job' in b) out.jobs.push(b.job!);
    else if (b.permanent) out.failures.push(b.problem);
    else out.released.push(b.problem);
  }
  return out;
}

function jobOf(row: ClaimedRow, dkim: JobDkim, route: OutboundJob['route'], attachments: OutboundJob['message']['attachments'], returnPath: string | null): OutboundJob {
  // A submitted message's own Date (plan.ts, KeptHeaders) rides in its headers: it is the Date, as written.
  const { [KEPT_DATE_HEADER]: keptDate, ...kept } = row.headers;
  // The internal Return-Path of a forward is the envelope's, never a header (the API refuses it in a send).
  const headers = row.origin === 'forward' ? Object.fromEntries(Object.entries(kept).filter(([name]) => name !== FORWARD_RETURN_PATH_HEADER)) : kept;
  return {
    email_id: row.id,
    attempt: row.attempts,
    lease_until: row.lease_until,
    envelope: { from: row.sender, to: row.recipient, ...(returnPath ? { return_path: returnPath } : {}) },
    message: {
      message_id: row.message_id,
      date: keptDate ?? row.date,
      from: row.from,
      to: row.to,
      cc: row.cc,
      reply_to: row.reply_to,
      subject: row.subject,
      text: row.text,
      html: row.html,
      headers,
      attachments,
    },
    dkim,
    route,
  };
}

/** Never unsigned: a message whose domain has no key (or whose key cannot be opened) is not sent. */
async function signingKey(settings: Settings, row: ClaimedRow): Promise<JobDkim> {
  const name = row.domain_name ?? domainOfAddress(row.from) ?? row.sender;
  if (!row.domain_name) {
    throw new JobProblem(`from domain ${name} was deleted after the send: the message cannot be DKIM-signed, and is never sent unsigned`, true);
  }
  let dkim: JobDkim | null;
  try {
    dkim = await dkimForJob(settings, {
      name: row.domain_name, dkimSelector: row.dkim_selector, dkimAlgorithm: row.dkim_algorithm, dkimPrivateKeySealed: row.dkim_private_key_sealed,
    });
  } catch (e) {
    if (e instanceof SealError) throw new JobProblem(`the DKIM key of ${name} cannot be opened (${e.message}): the message is never sent unsigned`, true);
    throw e;
  }
  if (!dkim) throw new JobProblem(`from domain ${name} has no DKIM key: the message cannot be signed, and is never sent unsigned`, true);
  return dkim;
}

async function routeOf(settings: Settings, row: ClaimedRow, pool: SmtpServerRow[]): Promise<OutboundJob['route']> {
  try {
    return await chooseRoute(settings, row.recipient, row.project_server, pool);
  } catch (e) {
    if (e instanceof RoutePasswordError) throw new JobProblem(e.message, true, e.detail);
    if (e instanceof SealError) throw new JobProblem(e.message, true);
    throw e;
  }
}

async function readAttachments(store: R2Bucket, list: OutboundAttachment[]): Promise<OutboundJob['message']['attachments']> {
  return Promise.all(list.map(async (a, i) => {
    let object: R2ObjectBody | null;
    try {
      object = await store.get(a.r2_key);
    } catch (e) {
      throw new JobProblem(`attachment ${i} (${a.filename}) could not be read from storage: ${e instanceof Error ? e.message : String(e)}`, false);
    }
    if (!object) throw new JobProblem(`attachment ${i} (${a.filename}) is missing from storage`, true);
    return { filename: a.filename, content_type: a.content_type, content_base64: toBase64(new Uint8Array(await object.arrayBuffer())) };
  }));
}
