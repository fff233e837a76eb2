// A forward addressed to the bounce domain (docs/bounces.md, "Receiving
// reports"): never stored as inbound mail. A DSN or ARF report whose return
// path carries a valid MAC is recorded against the email it names
// (`recordBounces`); anything else is dropped with a log line. Either way the
// node is answered 200, so it does not send it again.
import { splitAddress } from '@edgemail/shared';
import type { InboundMeta } from '../../../contracts/inbound-meta.js';
import type { Db } from '../../../db/client.js';
import { parseBounceReport } from './parse-report.js';
import { recordBounces } from './record.js';
import { bounceDomain, verpEmailId, type VerpSettings } from './verp.js';
import { applyUnsubscribe, checkMailto, type UnsubscribeSettings } from '../../unsubscribe/apply.js';
import { readMailtoLocalPart } from '../../unsubscribe/token.js';

/** What the bounce domain's mail is judged with: the return path's MAC, and the `mailto:` of one-click unsubscribe. */
export type BounceSettings = VerpSettings & UnsubscribeSettings;

/**
 * The head of the raw message that is read: the machine-readable part of a
 * report comes before the returned message (RFC 6522), so a report is read
 * whole long before this; the rest of a large returned message is dropped.
 */
export const MAX_REPORT_BYTES = 256 * 1024;

export interface BounceForward {
  meta: Pick<InboundMeta, 'spool_id' | 'size' | 'rcpt_to' | 'mail_from'>;
  /** The rest of the body: the raw message (`meta.size` bytes), then the node's attachments. */
  body: { pipe(n: number, writable: WritableStream<Uint8Array>, what: string): Promise<void>; drain(): Promise<void> };
}

/** Ingest's answer for such a forward: no inbound record; the events to hand over. */
export interface BounceIngestResult {
  inbound_emails: never[];
  duplicate: false;
  events: { projectId: string; outboxId: number }[];
}

/** Every recipient is at the bounce domain (mail to it and to a project's domain at once is ordinary inbound mail). */
export function isBounceForward(rcptTo: string[], settings: VerpSettings): boolean {
  const domain = bounceDomain(settings);
  return domain !== null && rcptTo.length > 0 && rcptTo.every((a) => splitAddress(a)?.domain.toLowerCase() === domain);
}

/** The first `max` bytes of `n` piped through, the rest read and dropped. */
async function readHead(body: BounceForward['body'], n: number, max: number): Promise<Uint8Array> {
  const head = new Uint8Array(Math.min(n, max));
  let got = 0;
  await body.pipe(n, new WritableStream<Uint8Array>({
    write(chunk) {
      if (got < head.byteLength) head.set(chunk.subarray(0, head.byteLength - got), got);
      got += chunk.byteLength;
    },
  }), 'raw message');
  return head;
}

/**
 * @example if (isBounceForward(meta.rcpt_to, config)) return ingestBounceForward(db, config, { meta, body });
 */
export async function ingestBounceForward(db: Db, settings: BounceSettings, message: BounceForward): Promise<BounceIngestResult> {
  const { meta } = message;
  const answer: BounceIngestResult = { inbound_emails: [], duplicate: false, events: [] };
  const raw = await readHead(message.body, meta.size, MAX_REPORT_BYTES);
  await message.body.drain();
  const dropped = (why: string) => {
    console.warn(`bounce report ${meta.spool_id} to ${meta.rcpt_to.join(', ')} from ${meta.mail_from || '<>'} dropped: ${why}`);
    return answer;
  };

  // A mail to the `mailto:` of List-Unsubscribe (docs/sending.md): an unsubscribe, whatever it says.
  const unsubscribeTo = meta.rcpt_to.find((a) => readMailtoLocalPart(splitAddress(a)?.local ?? '') !== null);
  if (unsubscribeTo) {
    const verdict = await checkMailto(db, settings, splitAddress(unsubscribeTo)!.local);
    if (!verdict.ok) return dropped(`unsubscribe address ${verdict.kind === 'expired' ? 'expired (sending.unsubscribe_link_ttl)' : 'not valid (bad MAC, or no such email)'}`);
    const { recorded, events } = await applyUnsubscribe(db, verdict.unsubscribe, 'mailto', { clientIp: null, path: 'mailto' });
    console.info(`unsubscribe ${meta.spool_id} by mail for email ${verdict.unsubscribe.emailId}${recorded ? '' : ': already recorded'}`);
    for (const [projectId, rows] of events) answer.events.push(...[...rows.ids, ...rows.settled].map((outboxId) => ({ projectId, outboxId })));
    return answer;
  }

  // One return path names one email; a second valid one (never sent so) is ignored.
  const verdicts = await Promise.all(meta.rcpt_to.map((a) => verpEmailId(settings, a)));
  const named = verdicts.find((v) => v.ok);
  if (!named?.ok) return dropped(verdicts.map((v) => (v.ok ? '' : v.problem)).join('; '));
  const parsed = await parseBounceReport(raw);
  if (!parsed.ok) return dropped(parsed.problem);

  const { report } = parsed;
  const { recorded, events } = await recordBounces(db, [{
    emailId: named.emailId, type: report.type, source: report.kind,
    // The spool id: the node forwarding the same report again records nothing more.
    sourceRef: meta.spool_id,
    smtpCode: report.smtpCode, status: report.status, diagnostic: report.diagnostic, remoteMta: report.remoteMta,
    feedbackType: report.feedbackType, originalMessageId: report.originalMessageId,
  }]);
  if (!recorded.length) console.info(`bounce report ${meta.spool_id} about email ${named.emailId}: already recorded, or no such email`);
  // Rows born handed over go along too (the console stream takes them; the dispatcher finds nothing to do: reports are rare).
  for (const [projectId, rows] of events) answer.events.push(...[...rows.ids, ...rows.settled].map((outboxId) => ({ projectId, outboxId })));
  return answer;
}
