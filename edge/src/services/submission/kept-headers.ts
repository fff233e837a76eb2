// A submitted message's own Message-ID and Date (docs/submission.md, "Kept
// as written"): kept on the sent message when valid, since threading in mail
// clients hangs on the Message-ID; written anew when missing or malformed.
import type { KeptHeaders } from '../emails/plan.js';

const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const DOT_ATOM = `${ATEXT}(?:\\.${ATEXT})*`;
/** RFC 5322 3.6.4 msg-id: `<` dot-atom-text `@` (dot-atom-text or no-fold-literal) `>`, no spaces or comments. */
const MSG_ID = new RegExp(`^<${DOT_ATOM}@(?:${DOT_ATOM}|\\[[\\x21-\\x5a\\x5e-\\x7e]*\\])>$`);

const MONTHS = 'Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec';
/** RFC 5322 3.3 date-time (with the obsolete zone names of 4.3), an optional trailing comment. */
const DATE_TIME = new RegExp(
  `^(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),\\s*)?(\\d{1,2})\\s+(${MONTHS})\\s+(\\d{4})\\s+(\\d{2}):(\\d{2})(?::(\\d{2}))?\\s+([+-]\\d{4}|UT|GMT|[ECMP][SD]T|[A-IK-Za-ik-z])(?:\\s*\\([^()]*\\))?$`,
);
const NAMED_ZONES: Record<string, number> = { UT: 0, GMT: 0, EST: -300, EDT: -240, CST: -360, CDT: -300, MST: -420, MDT: -360, PST: -480, PDT: -420 };

/** The Message-ID when it is an RFC 5322 msg-id (at most 998 characters), else null. */
export function validMessageId(value: string | undefined): string | null {
  const id = value?.trim();
  return id && id.length <= 998 && MSG_ID.test(id) ? id : null;
}

/**
 * The Date as RFC 3339 in the client's own offset (`Tue, 1 Jul 2003 10:52:37
 * +0200` → `2003-07-01T10:52:37+02:00`, which the node writes back as
 * `Tue, 01 Jul 2003 10:52:37 +0200`), or null when it is not an RFC 5322
 * date-time or names no real day (31 Feb).
 */
export function validDate(value: string | undefined): string | null {
  const m = DATE_TIME.exec(value?.trim() ?? '');
  if (!m) return null;
  const [, day, month, year, hour, minute, second = '00', zone] = m as unknown as string[];
  const offset = /^[+-]/.test(zone!) ? (zone![0] === '-' ? -1 : 1) * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(3, 5))) : NAMED_ZONES[zone!.toUpperCase()] ?? 0;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 60 || Math.abs(offset) > 14 * 60) return null;
  const monthIndex = MONTHS.split('|').indexOf(month!);
  const local = Date.UTC(Number(year), monthIndex, Number(day), Number(hour), Number(minute), Math.min(Number(second), 59));
  const check = new Date(local);
  if (check.getUTCDate() !== Number(day) || check.getUTCMonth() !== monthIndex || Number(year) < 1900) return null;
  const pad = (n: number) => String(n).padStart(2, '0');
  const sign = offset < 0 ? '-' : '+';
  return `${check.toISOString().slice(0, 19)}${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
}

/** What of the client's Message-ID and Date the sent message keeps. */
export function keptHeaders(request: { message_id?: string; date?: string }): KeptHeaders {
  const messageId = validMessageId(request.message_id);
  const date = validDate(request.date);
  return { ...(messageId ? { messageId } : {}), ...(date ? { date } : {}) };
}
