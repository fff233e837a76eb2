// Reading a bounce report (docs/bounces.md, "Receiving reports"): a DSN
// (RFC 3464, `multipart/report; report-type=delivery-status`) or an ARF
// complaint (RFC 5965, `report-type=feedback-report`), parsed with postal-mime
// (Workers-compatible), its machine-readable part read field by field.
import PostalMime, { type Attachment } from 'postal-mime';
import type { BounceType } from './report.js';

/** What one report says about the one email its return path names. */
export interface ParsedReport {
  kind: 'dsn' | 'arf';
  type: BounceType;
  smtpCode: number | null;
  /** Enhanced status code, `5.1.1`. */
  status: string | null;
  diagnostic: string | null;
  remoteMta: string | null;
  feedbackType: string | null;
  originalMessageId: string | null;
}

export type ReportVerdict = { ok: true; report: ParsedReport } | { ok: false; problem: string };

/** Longest text kept of a field (a diagnostic can run on); longer is cut. */
const MAX_FIELD_CHARS = 4000;
/** ARF feedback types that are a recipient's complaint (RFC 5965 7.3); `not-spam` and `auth-failure` are not. */
const COMPLAINTS = new Set(['abuse', 'fraud', 'virus', 'other']);
const ENHANCED = /^([245])\.(\d{1,3})\.(\d{1,3})\b/;

/**
 * A header-like block per paragraph (fields folded onto one line, names
 * lower case, the first value of a name kept): RFC 3464's per-message block
 * then one per recipient; RFC 5965's one block.
 */
export function fieldBlocks(text: string): Map<string, string>[] {
  return text.replace(/\r\n?/g, '\n').split(/\n[ \t]*\n/).map((paragraph) => {
    const fields = new Map<string, string>();
    for (const line of paragraph.replace(/\n[ \t]+/g, ' ').split('\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      if (!fields.has(name)) fields.set(name, line.slice(colon + 1).trim());
    }
    return fields;
  }).filter((fields) => fields.size > 0);
}

/** `dns; mx.example.org` → `mx.example.org`: the value after a typed field's `<type>;`. */
const typedValue = (value: string | undefined): string | null => {
  if (value === undefined) return null;
  const semicolon = value.indexOf(';');
  return clip(semicolon < 0 ? value : value.slice(semicolon + 1).trim()) || null;
};

const clip = (text: string) => text.replace(/\u0000/g, '').slice(0, MAX_FIELD_CHARS);

const textOf = (a: Attachment) =>
  typeof a.content === 'string' ? a.content : new TextDecoder().decode(a.content);

/** The Message-ID of the returned message (`message/rfc822`) or its headers (`text/rfc822-headers`). */
function originalMessageId(attachments: Attachment[]): string | null {
  const original = attachments.find((a) => /^(message\/(global|rfc822)|(text|message)\/(global-headers|rfc822-headers))$/.test(a.mimeType));
  if (!original) return null;
  const headers = textOf(original).replace(/\r\n?/g, '\n').split(/\n[ \t]*\n/)[0] ?? '';
  const id = fieldBlocks(headers)[0]?.get('message-id');
  return id ? clip(id) : null;
}

function readDsn(part: Attachment, attachments: Attachment[]): ReportVerdict {
  const [, ...recipients] = fieldBlocks(textOf(part));
  const actionOf = (f: Map<string, string>) => (f.get('action') ?? '').toLowerCase().split(/\s/)[0];
  // One envelope recipient per return path, so one block to read: the failure, else the delay.
  const block = recipients.find((f) => actionOf(f) === 'failed') ?? recipients.find((f) => actionOf(f) === 'delayed');
  if (!block) {
    const actions = recipients.map(actionOf).filter(Boolean);
    return { ok: false, problem: `delivery-status report without a failed or delayed recipient${actions.length ? ` (action ${actions.join(', ')})` : ''}` };
  }
  const status = ENHANCED.exec(block.get('status') ?? '')?.[0] ?? null;
  const diagnostic = typedValue(block.get('diagnostic-code'));
  const code = /^([245]\d\d)\b/.exec(diagnostic ?? '')?.[1];
  const smtpCode = code ? Number(code) : null;
  // A 5.x.x failure is hard; a 4.x.x one, or a delay, is soft. Without a status, the SMTP code says it.
  const permanent = status ? status.startsWith('5') : smtpCode === null || smtpCode >= 500;
  return {
    ok: true,
    report: {
      kind: 'dsn', type: actionOf(block) === 'failed' && permanent ? 'hard' : 'soft',
      smtpCode, status, diagnostic: block.has('diagnostic-code') ? clip(block.get('diagnostic-code')!) : null,
      remoteMta: typedValue(block.get('remote-mta')), feedbackType: null,
      originalMessageId: originalMessageId(attachments),
    },
  };
}

function readArf(part: Attachment, attachments: Attachment[]): ReportVerdict {
  const fields = fieldBlocks(textOf(part))[0];
  const feedbackType = fields?.get('feedback-type')?.toLowerCase().split(/[\s;]/)[0];
  if (!feedbackType) return { ok: false, problem: 'feedback report without a Feedback-Type' };
  if (!COMPLAINTS.has(feedbackType)) return { ok: false, problem: `feedback type ${clip(feedbackType).slice(0, 100)} is not a complaint` };
  return {
    ok: true,
    report: {
      kind: 'arf', type: 'complaint', smtpCode: null, status: null, diagnostic: null, remoteMta: null,
      feedbackType: clip(feedbackType), originalMessageId: originalMessageId(attachments),
    },
  };
}

/**
 * The report in `raw`, or why it is none. A message is a DSN when it has a
 * `message/delivery-status` part (`message/global-delivery-status` too) and
 * an ARF report when it has a `message/feedback-report` part, wherever the
 * part sits; anything else is not a report. Never throws.
 */
export async function parseBounceReport(raw: Uint8Array): Promise<ReportVerdict> {
  let attachments: Attachment[];
  try {
    ({ attachments } = await PostalMime.parse(raw, { attachmentEncoding: 'utf8', maxNestingDepth: 20 }));
  } catch (err) {
    return { ok: false, problem: `MIME could not be parsed: ${err instanceof Error ? err.message : String(err)}` };
  }
  const dsn = attachments.find((a) => a.mimeType === 'message/delivery-status' || a.mimeType === 'message/global-delivery-status');
  if (dsn) return readDsn(dsn, attachments);
  const arf = attachments.find((a) => a.mimeType === 'message/feedback-report');
  if (arf) return readArf(arf, attachments);
  return { ok: false, problem: 'not a delivery-status or feedback report' };
}
