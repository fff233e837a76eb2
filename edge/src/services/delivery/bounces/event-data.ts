// `data` of `email.bounced` / `email.complained` outbox rows, built in SQL so
// that the statement recording the bounce writes its event too. It is the
// email's event data (emails/events.ts) plus `error_message` when the row has
// one (a hard bounce's diagnostic) and the bounce itself under `bounce` (`EmailBounceEventData`,
// shared/src/webhooks/events.ts).
import { sql, type SQL } from 'drizzle-orm';
import type { BounceEventDetail } from '@edgemail/shared';
import { emailEventData, type EventColumns } from '../../emails/events.js';

/** Every key of `BounceEventDetail`, so that a change there fails to compile here until the SQL follows. */
const BOUNCE_KEYS = ['id', 'type', 'source', 'smtp_code', 'status', 'diagnostic', 'remote_mta', 'feedback_type', 'original_message_id', 'created_at'] as const satisfies readonly (keyof BounceEventDetail)[];
type Missing = Exclude<keyof BounceEventDetail, (typeof BOUNCE_KEYS)[number]>;
const allKeysCovered: Missing extends never ? true : never = true;
void allKeysCovered;

/** A `bounces` row's columns, by the alias the statement gives them. */
export interface BounceColumns {
  id: SQL;
  type: SQL;
  source: SQL;
  smtpCode: SQL;
  status: SQL;
  diagnostic: SQL;
  remoteMta: SQL;
  feedbackType: SQL;
  originalMessageId: SQL;
  createdAt: SQL;
}

export function bounceEventData(email: EventColumns, bounce: BounceColumns): SQL {
  return sql`(${emailEventData(email)}
    || case when ${email.errorMessage} is not null then jsonb_build_object('error_message', ${email.errorMessage}) else '{}'::jsonb end
    || jsonb_build_object(
      'bounce', jsonb_build_object(
        'id', ${bounce.id}, 'type', ${bounce.type}::text, 'source', ${bounce.source}, 'smtp_code', ${bounce.smtpCode},
        'status', ${bounce.status}, 'diagnostic', ${bounce.diagnostic}, 'remote_mta', ${bounce.remoteMta},
        'feedback_type', ${bounce.feedbackType}, 'original_message_id', ${bounce.originalMessageId},
        'created_at', to_char(${bounce.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))))`;
}
