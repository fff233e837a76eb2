// Mail the service sends itself (invitations, password resets) through its
// own sending path: an `outbound_messages` row (origin `system`) and one
// queued `emails` row, delivered by the relay nodes like any other (captured
// to .data/outbound-capture under `pnpm dev`).
//
// It is filed under the system-mail project, never a tenant's: the message
// carries a single-use token, and a tenant's email log is readable by all of
// its members (a member could take over an invited admin's account). The
// project is made on first use with a fixed id, so no migration or setting
// names it; it has no plan (nothing counts against anyone's quota), no
// members, and only a platform credential (`X-Service-Project-Id`) reads it.
// Mail is never sent unsigned (delivery/jobs.ts): the From's domain is made a
// domain of that project, with its own DKIM key, on first use; the operator
// publishes its records (GET /api/v1/domains in that project) so the
// signatures verify (docs/console.md).
import { sql, type SQL } from 'drizzle-orm';
import { domains, emails, outboundMessages, projects } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { newDomainKey } from '../domains/keys.js';
import { formatMailbox, parseOneMailbox } from '../../contracts/email-address.js';

export const SYSTEM_MAIL_PROJECT_ID = '00000000-0000-4000-8000-00000000e0a1';
export const SYSTEM_MAIL_PROJECT_NAME = 'edgemail system mail';

type SenderConfig = Pick<Config, 'console.mail_from' | 'server.public_url' | 'database.crypto.encryption_key'>;

/**
 * Makes sure the system-mail project and its From domain (with a DKIM key)
 * exist: one read when they do; the key is made only when the domain is new.
 */
export async function prepareSystemMail(db: Db, config: SenderConfig): Promise<void> {
  const { domain } = systemMailFrom(config);
  const { rows } = await db.execute(sql`select 1 from ${domains} where project_id = ${SYSTEM_MAIL_PROJECT_ID} and name = ${domain}`);
  if (rows.length) return;
  const key = await newDomainKey(config['database.crypto.encryption_key'], 'rsa');
  await db.batch([
    db.execute(sql`insert into ${projects} (id, name) values (${SYSTEM_MAIL_PROJECT_ID}, ${SYSTEM_MAIL_PROJECT_NAME}) on conflict (id) do nothing`),
    // A concurrent first use made it too: either key signs.
    db.execute(sql`
      insert into ${domains} (project_id, name, dkim_selector, dkim_algorithm, dkim_private_key_sealed, dkim_public_key)
      values (${SYSTEM_MAIL_PROJECT_ID}, ${domain}, ${key.dkimSelector}, ${key.dkimAlgorithm}, ${key.dkimPrivateKeySealed}, ${key.dkimPublicKey})
      on conflict do nothing`),
  ]);
}

export interface SystemMail {
  subject: string;
  text: string;
  html: string;
}

/** `console.mail_from`, else `edgemail <no-reply@<public host>>` (`localhost` for an IP address host). */
export function systemMailFrom(config: Pick<Config, 'console.mail_from' | 'server.public_url'>): { header: string; domain: string } {
  const configured = config['console.mail_from'];
  if (configured) {
    // Written again from its parts, as a send's From is (a name with a comma gets quoted).
    // The setting's own check allows `Name <address>` with any name: what the parser refuses is split at `<`.
    const mailbox = parseOneMailbox(configured);
    const angle = /^([^<]*)<([^>]+)>$/.exec(configured.trim());
    const [name, address] = !('problem' in mailbox) ? [mailbox.name, mailbox.addrSpec]
      : angle ? [angle[1]!.trim().replace(/^"|"$/g, ''), angle[2]!.trim()] : ['', configured.trim()];
    return { header: formatMailbox(name, address), domain: address.slice(address.lastIndexOf('@') + 1).toLowerCase() };
  }
  const host = new URL(config['server.public_url']).hostname.replace(/^\[|\]$/g, '');
  const domain = /^[\d.]+$/.test(host) || host.includes(':') ? 'localhost' : host.toLowerCase();
  return { header: `edgemail <no-reply@${domain}>`, domain };
}

/**
 * Inserts one message to `recipient` (an SQL expression: a column of `source`,
 * or a parameter) for each row of `source` (an SQL `from` list naming the
 * rows the mail depends on: none, none sent), in the statement's snapshot.
 * Signed with the key of the From's domain (`prepareSystemMail` first).
 */
export function systemMailStatement(
  config: Pick<Config, 'console.mail_from' | 'server.public_url'>,
  mail: SystemMail,
  recipient: SQL,
  source: SQL,
  leading: SQL = sql``,
): SQL {
  const from = systemMailFrom(config);
  return sql`
    with ${leading}
    mail_source as (select ${recipient} as recipient from ${source}),
    message as (
      insert into ${outboundMessages} (id, project_id, domain_id, message_id, "from", "to", subject, html, "text", origin)
      select gen_random_uuid(), ${SYSTEM_MAIL_PROJECT_ID},
        (select d.id from ${domains} d where d.project_id = ${SYSTEM_MAIL_PROJECT_ID} and d.name = ${from.domain} limit 1),
        '<' || gen_random_uuid() || '@' || ${from.domain} || '>', ${from.header}, array[s.recipient]::text[], ${mail.subject}, ${mail.html}, ${mail.text}, 'system'
      from mail_source s
      returning id, "to"[1] as recipient
    )
    insert into ${emails} (project_id, message_id, recipient, kind, status, next_attempt_at)
    select ${SYSTEM_MAIL_PROJECT_ID}, m.id, m.recipient, 'to', 'queued', now() from message m
    returning id`;
}

/** Escapes text for the HTML part. */
export const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
