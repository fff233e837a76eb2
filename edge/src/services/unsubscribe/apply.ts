// Acting on an unsubscribe (docs/sending.md, "One-click unsubscribe"): the
// token (or the `mailto:` local part) is checked against the email's row,
// then one statement suppresses the address for the email's stream (reason
// `unsubscribe`), records the unsubscribe once per email (what the
// unsubscribe rate counts), writes the `email.unsubscribed` event and an
// audit event. Doing it again changes nothing more and answers the same.
import { eq, sql } from 'drizzle-orm';
import { auditEvents, emails, outbox, outboundMessages, suppressions, unsubscribes } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { emailEventData, eventsByProject, type OutboxRows } from '../emails/events.js';
import { handedOverUnlessSubscribed } from '../webhooks/subscribed.js';
import { httpsTokenMatches, mailtoMatches, readHttpsToken, readMailtoLocalPart, type UnsubscribeFacts } from './token.js';

export type UnsubscribeSettings = Pick<Config, 'database.crypto.encryption_key' | 'sending.unsubscribe_link_ttl'>;

/** What a token stands for, once checked: shown on the confirmation page, acted on by a POST. */
export interface CheckedUnsubscribe extends UnsubscribeFacts {
  /** The address as the page shows it, partly hidden (`a•••@example.org`). */
  shownAddress: string;
}

export type TokenVerdict =
  | { ok: true; unsubscribe: CheckedUnsubscribe }
  /** `invalid`: not a token of ours (forged, altered, another's); `expired`: ours, past `sending.unsubscribe_link_ttl`. */
  | { ok: false; kind: 'invalid' | 'expired' };

/** Leeway for a clock running ahead on the edge that signed. */
const FUTURE_LEEWAY_S = 300;

async function factsOf(db: Db, emailId: string): Promise<(UnsubscribeFacts & { createdAt: Date }) | null> {
  const [row] = await db.select({
    projectId: emails.projectId, address: emails.recipient, emailId: emails.id, createdAt: emails.createdAt,
    stream: outboundMessages.stream, listUnsubscribe: outboundMessages.listUnsubscribe,
  }).from(emails).innerJoin(outboundMessages, eq(outboundMessages.id, emails.messageId)).where(eq(emails.id, emailId));
  // A message that never carried the headers has no valid token, whatever is presented.
  return row && row.listUnsubscribe ? row : null;
}

/** `a•••@example.org`: enough for its owner to recognise, little for anyone who sees the page. */
export function shownAddress(address: string): string {
  const at = address.lastIndexOf('@');
  return at <= 0 ? '•••' : `${address[0]}•••${address.slice(at)}`;
}

export async function checkHttpsToken(db: Db, settings: UnsubscribeSettings, token: string, now = new Date()): Promise<TokenVerdict> {
  const read = readHttpsToken(token);
  if (!read) return { ok: false, kind: 'invalid' };
  const facts = await factsOf(db, read.emailId);
  if (!facts || !(await httpsTokenMatches(settings, read, facts))) return { ok: false, kind: 'invalid' };
  const nowS = now.getTime() / 1000;
  if (read.issuedAt > nowS + FUTURE_LEEWAY_S) return { ok: false, kind: 'invalid' };
  if (read.issuedAt + settings['sending.unsubscribe_link_ttl'] / 1000 < nowS) return { ok: false, kind: 'expired' };
  return { ok: true, unsubscribe: { ...facts, shownAddress: shownAddress(facts.address) } };
}

export async function checkMailto(db: Db, settings: UnsubscribeSettings, localPart: string, now = new Date()): Promise<TokenVerdict> {
  const read = readMailtoLocalPart(localPart);
  if (!read) return { ok: false, kind: 'invalid' };
  const facts = await factsOf(db, read.emailId);
  const createdAt = facts ? Math.floor(facts.createdAt.getTime() / 1000) : 0;
  if (!facts || !(await mailtoMatches(settings, read, facts, createdAt))) return { ok: false, kind: 'invalid' };
  if (createdAt + settings['sending.unsubscribe_link_ttl'] / 1000 < now.getTime() / 1000) return { ok: false, kind: 'expired' };
  return { ok: true, unsubscribe: { ...facts, shownAddress: shownAddress(facts.address) } };
}

export interface Applied {
  /** False when this email's unsubscribe was recorded already (nothing new happened). */
  recorded: boolean;
  events: Map<string, OutboxRows>;
}

/**
 * @param via `one_click` (the HTTPS link) or `mailto`
 * @param request the client address and path for the audit event
 */
export async function applyUnsubscribe(db: Db, u: UnsubscribeFacts, via: 'one_click' | 'mailto', request: { clientIp: string | null; path: string }): Promise<Applied> {
  const address = u.address.toLowerCase();
  const detail = `${address} unsubscribed from stream ${u.stream} (${via === 'one_click' ? 'one-click link' : 'mailto'}), email ${u.emailId}`;
  const { rows: [row] } = await db.execute<{ recorded: boolean; events: { id: number; project_id: string; settled: boolean }[] | null }>(sql`
    with suppressed as (
      insert into ${suppressions} (project_id, address, reason, detail, source_email_id, stream)
      values (${u.projectId}, ${address}, 'unsubscribe', ${via === 'one_click' ? 'one-click unsubscribe' : 'unsubscribe by mail'}, ${u.emailId}, ${u.stream})
      on conflict (project_id, address, stream) do update
        set reason = excluded.reason, detail = excluded.detail, source_email_id = excluded.source_email_id, expires_at = null, created_at = now()
        where ${suppressions}.expires_at is not null and ${suppressions}.expires_at <= now()
    ),
    recorded as (
      insert into ${unsubscribes} (project_id, email_id, stream, address, method)
      values (${u.projectId}, ${u.emailId}, ${u.stream}, ${address}, ${via})
      on conflict (email_id) do nothing
      returning email_id
    ),
    audited as (
      insert into ${auditEvents} (category, type, project_id, client_ip, method, path, status, detail)
      select 'project', 'email.unsubscribed', ${u.projectId}, ${request.clientIp}, 'POST', ${request.path}, 200, ${detail}
      from recorded
    ),
    events as (
      insert into ${outbox} (project_id, event, data, handed_over_at)
      select e.project_id, 'email.unsubscribed', ${emailEventData({
        id: sql`e.id`, projectId: sql`e.project_id`, from: sql`m."from"`, recipient: sql`e.recipient`, subject: sql`m.subject`,
        status: sql`e.status`, attempts: sql`e.attempts`, errorMessage: sql`e.error_message`, stream: sql`m.stream`,
      })} || jsonb_build_object('unsubscribe', jsonb_build_object('method', ${via}::text, 'stream', m.stream,
              'created_at', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))),
        ${handedOverUnlessSubscribed(sql`e.project_id`, sql`'email.unsubscribed'`)}
      from recorded r join ${emails} e on e.id = r.email_id join ${outboundMessages} m on m.id = e.message_id
      returning id, project_id, handed_over_at
    )
    select exists (select 1 from recorded) as recorded,
      (select json_agg(json_build_object('id', id, 'project_id', project_id, 'settled', handed_over_at is not null)) from events) as events`);
  return { recorded: row?.recorded ?? false, events: eventsByProject(row?.events ?? []) };
}
