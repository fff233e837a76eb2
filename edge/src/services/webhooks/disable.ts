// Disabling a webhook whose every attempt has failed for `webhook.disable_after`
// (and at least `webhook.disable_after_failures` times): one statement marks it
// disabled, closes its pending deliveries, writes the audit event, the
// `webhook.disabled` outbox row for the project's other webhooks, and a mail to
// each project owner through the service's own sending path. All or nothing,
// and once: a webhook already disabled matches no row, so nothing is sent twice.
import { sql } from 'drizzle-orm';
import { auditEvents, memberships, outbox, users, webhookDeliveries, webhooks } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { escapeHtml, prepareSystemMail, systemMailStatement, type SystemMail } from '../system-mail/send.js';
import type { FailingWebhook } from './queue.js';

type DisableConfig = Pick<Config, 'console.mail_from' | 'server.public_url' | 'database.crypto.encryption_key'>;

const isoOf = (at: string | Date | null) => (at === null ? null : new Date(at).toISOString());

/** Why a webhook was disabled, as `disabled_reason`, the audit detail and the event's `reason` say it. */
export function disableReason(w: Pick<FailingWebhook, 'consecutive_failures' | 'failing_since'>): string {
  return `every delivery attempt failed since ${isoOf(w.failing_since)} (${w.consecutive_failures} attempts)`;
}

/**
 * Disables `w` unless it is disabled already (or was enabled again meanwhile,
 * its span reset). Answers the outbox rows written, for the hand-over (none
 * when nothing was done).
 */
export async function disableWebhook(db: Db, config: DisableConfig, w: FailingWebhook): Promise<number[]> {
  const reason = disableReason(w);
  await prepareSystemMail(db, config);
  const leading = sql`
    disabled as (
      update ${webhooks} set disabled_at = now(), disabled_reason = ${reason}::text
      where id = ${w.id} and disabled_at is null and failing_since is not null
      returning id, project_id, url, disabled_at, failing_since, consecutive_failures
    ),
    closed as (
      update ${webhookDeliveries} set status = 'failed', next_attempt_at = null, completed_at = now(), last_error = 'webhook disabled'
      where webhook_id in (select id from disabled) and status = 'pending'
    ),
    audited as (
      insert into ${auditEvents} (category, type, project_id, detail)
      select 'project', 'webhook.disabled', d.project_id, 'webhook ' || d.id || ' (' || d.url || ') disabled: ' || ${reason}::text from disabled d
    ),
    events as (
      insert into ${outbox} (project_id, event, data)
      select d.project_id, 'webhook.disabled', jsonb_build_object(
        'project_id', d.project_id, 'webhook_id', d.id, 'url', d.url,
        'disabled_at', to_char(d.disabled_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'reason', ${reason}::text,
        'failing_since', to_char(d.failing_since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'consecutive_failures', d.consecutive_failures)
      from disabled d
      returning id
    ),`;
  const owners = sql`disabled d join ${memberships} m on m.project_id = d.project_id and m.role = 'owner' join ${users} u on u.id = m.user_id`;
  await db.execute(systemMailStatement(config, disabledMail(w, reason), sql`u.email`, owners, leading));
  const { rows } = await db.execute<{ id: string | number }>(sql`
    select id from ${outbox}
    where project_id = ${w.project_id} and event = 'webhook.disabled' and handed_over_at is null and data->>'webhook_id' = ${w.id}`);
  return rows.map((r) => Number(r.id));
}

function disabledMail(w: FailingWebhook, reason: string): SystemMail {
  const enable = `POST /api/v1/webhooks/${w.id}/enable`;
  return {
    subject: `Webhook disabled in ${w.project_name}: ${w.url}`,
    text: [
      `The webhook ${w.url} (${w.id}) of the project "${w.project_name}" on edgemail was disabled: ${reason}.`,
      '', 'It receives no events until it is enabled again, in the console or with', `  ${enable}`, '',
      'Events of the meantime can be sent to it afterwards with POST /api/v1/webhooks/{id}/replay (docs/webhooks.md).',
    ].join('\n'),
    html: `<p>The webhook <code>${escapeHtml(w.url)}</code> (${w.id}) of the project <strong>${escapeHtml(w.project_name)}</strong> on edgemail was disabled: ${escapeHtml(reason)}.</p>
<p>It receives no events until it is enabled again, in the console or with <code>${enable}</code>.</p>
<p>Events of the meantime can be sent to it afterwards with <code>POST /api/v1/webhooks/{id}/replay</code> (docs/webhooks.md).</p>`,
  };
}
