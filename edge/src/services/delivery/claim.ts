// The claim (docs/sending.md, "Relay protocol: outbound"): one statement
// leases due recipients to the calling node and reads what their jobs need.
import { sql, type SQL } from 'drizzle-orm';
import { emails, outboundMessages, domains, smtpServers, type OutboundAttachment } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import type { NodeScope } from '../relay-nodes/domains.js';
import { bareAddress } from '../emails/events.js';
import { trackingColumns, type TrackingColumns } from '../tracking/options.js';

/**
 * The content one claim answer carries at most, estimated as text and html
 * plus attachments in base64, counted once per job: a message with 10 MiB of
 * attachments to 50 recipients would otherwise make an answer of gigabytes.
 * The first due recipient is always taken, whatever its size.
 */
export const CLAIM_CONTENT_BUDGET = 24 * 1024 * 1024;

/** An SMTP server a job may be routed through (the project's own, or one of the pool). */
export type SmtpServerRow = {
  id: string;
  name: string;
  host: string;
  port: number;
  security: string;
  username: string | null;
  password_sealed: string | null;
};

/** One claimed recipient with its message, its from-domain's key and its project's SMTP server. */
export type ClaimedRow = {
  id: string;
  project_id: string;
  recipient: string;
  attempts: number;
  /** RFC 3339, UTC, milliseconds. */
  lease_until: string;
  message_row_id: string;
  message_id: string;
  from: string;
  /** The bare from address (`bareAddress`): the envelope sender. */
  sender: string;
  to: string[];
  cc: string[];
  reply_to: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  /** `outbound_messages.origin`: a `forward` carries its SRS envelope sender in its headers (jobs.ts). */
  origin: string;
  /** The message stream, and whether the message carries one-click unsubscribe (jobs.ts writes its headers). */
  stream: string;
  list_unsubscribe: boolean;
  attachments: OutboundAttachment[];
  /** RFC 3339: the send's created_at. */
  date: string;
  /** Null when the message's domain was deleted since. */
  domain_name: string | null;
  dkim_selector: string | null;
  dkim_algorithm: string | null;
  dkim_private_key_sealed: string | null;
  /** The project's own SMTP server (its oldest, when it has several), or null. */
  project_server: SmtpServerRow | null;
} & TrackingColumns;

const rfc3339 = (column: SQL) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const serverColumns = sql`jsonb_build_object('id', s.id, 'name', s.name, 'host', s.host, 'port', s.port, 'security', s.security,
  'username', s.username, 'password_sealed', s.password_sealed)`;

/**
 * Leases up to `max` due recipients to `node` and answers them with what
 * their jobs are made of, plus the shared SMTP pool; one round trip.
 *
 * Due: `queued` with `next_attempt_at <= now()`, or `sending` whose lease has
 * run out (the node that held it died or went silent). Never `captured`,
 * `suppressed`, `sent` or `failed`. A node that is not installation-wide
 * sees its own project's only. Longest due first. `FOR UPDATE SKIP LOCKED`:
 * concurrent claims take disjoint rows and never wait on each other. A
 * claimed row is `sending`, leased to the node until `now() + outbound.lease`,
 * and its `attempts` is counted up.
 */
export async function claimDue(db: Db, settings: Pick<Config, 'outbound.lease'>, node: { id: string } & NodeScope, max: number): Promise<{ rows: ClaimedRow[]; pool: SmtpServerRow[] }> {
  const scope = node.installationWide ? sql`` : sql`and e.project_id = ${node.projectId}`;
  const claim = db.execute<ClaimedRow>(sql`
    with candidates as (
      select e.id, e.message_id, e.next_attempt_at
      from ${emails} e
      where e.status in ('queued', 'sending') and e.next_attempt_at <= now() ${scope}
      order by e.next_attempt_at, e.id
      limit ${max}
      for update skip locked
    ),
    sized as (
      select c.id,
        sum(b.bytes) over (order by c.next_attempt_at, c.id) - b.bytes as bytes_before
      from candidates c
      join ${outboundMessages} m on m.id = c.message_id
      cross join lateral (
        select coalesce(octet_length(m.html), 0) + coalesce(octet_length(m."text"), 0)
          + coalesce((select sum((a->>'size')::bigint) from jsonb_array_elements(m.attachments) a), 0) * 4 / 3 as bytes
      ) b
    ),
    claimed as (
      update ${emails} e
      set status = 'sending', attempts = e.attempts + 1,
          next_attempt_at = now() + ${settings['outbound.lease']} * interval '1 millisecond', lease_node_id = ${node.id}
      from sized s
      where e.id = s.id and s.bytes_before < ${CLAIM_CONTENT_BUDGET}
      returning e.id, e.project_id, e.message_id, e.recipient, e.attempts, e.next_attempt_at
    )
    select c.id, c.project_id, c.recipient, c.attempts, ${rfc3339(sql`c.next_attempt_at`)} as lease_until, m.stream, m.list_unsubscribe,
      m.id as message_row_id, m.message_id, m."from", ${bareAddress(sql`m."from"`)} as sender,
      m."to", m.cc, m.reply_to, m.subject, m.html, m."text", m.headers, m.origin, m.attachments, ${rfc3339(sql`m.created_at`)} as date,
      d.name as domain_name, d.dkim_selector, d.dkim_algorithm, d.dkim_private_key_sealed,
      ${trackingColumns},
      (select ${serverColumns} from ${smtpServers} s where s.project_id = c.project_id order by s.created_at, s.id limit 1) as project_server
    from claimed c
    join ${outboundMessages} m on m.id = c.message_id
    left join ${domains} d on d.id = m.domain_id`);
  // The shared pool's servers (and their passwords) go to the operator's installation-wide
  // nodes only: a node a tenant enrolled delivers its project's mail by MX instead.
  if (!node.installationWide) return { rows: (await claim).rows, pool: [] };
  const pool = db.execute<{ server: SmtpServerRow }>(sql`
    select ${serverColumns} as server from ${smtpServers} s where s.project_id is null order by s.created_at, s.id`);
  const [claimed, servers] = await db.batch([claim, pool]);
  return { rows: claimed.rows, pool: servers.rows.map((r) => r.server) };
}
