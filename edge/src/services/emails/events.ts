// `email.sent` / `email.failed` outbox rows, built in SQL so that they are
// written by the same statement that moves the recipient on (docs/webhooks.md,
// "How it works"). `data` is exactly `EmailEventData` (shared/src/webhooks/events.ts).
import { sql, type SQL } from 'drizzle-orm';
import type { EmailEventData } from '@edgemail/shared';

/** Every key of `EmailEventData`, so that a change there fails to compile here until the SQL follows. */
const EVENT_KEYS = ['id', 'project_id', 'sender', 'recipients', 'subject', 'status', 'attempts', 'error_message', 'stream'] as const satisfies readonly (keyof EmailEventData)[];
type Missing = Exclude<keyof EmailEventData, (typeof EVENT_KEYS)[number]>;
const allKeysCovered: Missing extends never ? true : never = true;
void allKeysCovered;

/**
 * The bare address of a from header value (`Acme <News@Acme.TEST>` →
 * `News@acme.test`): the text in the last `<…>` (or the whole value), the
 * domain lower case, as the log shows recipients. The job's envelope sender
 * and the events' `sender` are both this, so they cannot disagree.
 */
export function bareAddress(from: SQL): SQL {
  const bare = sql`btrim(coalesce(substring(${from} from '<([^<>]*)>\\s*$'), ${from}))`;
  return sql`(regexp_replace(${bare}, '@[^@]*$', '') || lower(coalesce(substring(${bare} from '@[^@]*$'), '')))`;
}

export interface EventColumns {
  id: SQL;
  projectId: SQL;
  /** `outbound_messages.from`, as given. */
  from: SQL;
  recipient: SQL;
  subject: SQL;
  /** The new status: `sent` or `failed`. */
  status: SQL;
  attempts: SQL;
  errorMessage: SQL;
  /** `outbound_messages.stream`; absent: the data names no stream (a caller that does not join the message). */
  stream?: SQL;
}

/** `data` of an `email.sent` / `email.failed` row; `error_message` only on failure. */
export function emailEventData(c: EventColumns): SQL {
  return sql`(jsonb_build_object(
      'id', ${c.id}, 'project_id', ${c.projectId}, 'sender', ${bareAddress(c.from)},
      'recipients', jsonb_build_array(${c.recipient}), 'subject', ${c.subject},
      'status', ${c.status}::text, 'attempts', ${c.attempts})
    || ${c.stream ? sql`jsonb_build_object('stream', ${c.stream})` : sql`'{}'::jsonb`}
    || case when ${c.status}::text = 'failed' then jsonb_build_object('error_message', ${c.errorMessage}) else '{}'::jsonb end)`;
}

/**
 * One project's outbox rows from one statement, for `handOverOutbox`: `ids`
 * for the dispatcher and the console's event stream; `settled`, rows born
 * handed over (no webhook of the project subscribes to their event, so no
 * dispatcher call), for the stream alone.
 */
export interface OutboxRows { ids: number[]; settled: number[] }

/**
 * The `[{id, project_id, settled?}]` a statement returned, grouped by project
 * for `handOverOutbox`; `settled` marks a row born handed over.
 */
export function eventsByProject(rows: { id: number | string; project_id: string; settled?: boolean }[]): Map<string, OutboxRows> {
  const byProject = new Map<string, OutboxRows>();
  for (const row of rows) {
    const entry = byProject.get(row.project_id) ?? { ids: [], settled: [] };
    (row.settled ? entry.settled : entry.ids).push(Number(row.id));
    byProject.set(row.project_id, entry);
  }
  return byProject;
}
