// The listener's two hooks into the routing rules: the header block captured
// as the data passes (bounded), and the refusal at the end of DATA.
import type { Readable } from 'node:stream';
import type { SMTPServerSession } from 'smtp-server';
import { parseHeaderBlock, type NodeRules } from './node-rules.js';
import { recipientDomain, asciiRecipient } from '../listener/on-rcpt-to.js';
import type { IngestAuthentication } from '../mail-auth/verdicts.js';

/** Header bytes kept for the rules: more than this and the rest of the block is not looked at. */
export const HEADER_CAPTURE_MAX = 64 * 1024;

/** Collects the message's header block from the data as it flows (the first HEADER_CAPTURE_MAX bytes at most). */
export function captureHeaderBlock(source: Readable): () => string {
  let text = '';
  const onData = (chunk: Buffer) => {
    text += chunk.toString('latin1', 0, Math.min(chunk.length, HEADER_CAPTURE_MAX - text.length));
    if (text.length >= HEADER_CAPTURE_MAX || /\r?\n\r?\n/.test(text)) source.off('data', onData);
  };
  source.on('data', onData);
  return () => text;
}

/**
 * The header block capture for this message, or null when no recipient's
 * project has rules the node holds (the usual case: the block is then neither
 * collected nor parsed, and the edge decides whatever rules appear meanwhile).
 */
export function headerCaptureFor(rules: NodeRules | undefined, session: SMTPServerSession, source: Readable): (() => string) | null {
  if (!rules?.judges(session.envelope.rcptTo.map((r) => recipientDomain(r.address) ?? ''))) return null;
  return captureHeaderBlock(source);
}

/** The `550 5.7.1` text when every recipient's project refuses the message by a rule, else null. */
export function refusalAtData(rules: NodeRules, session: SMTPServerSession, headerBlock: string, verdicts: IngestAuthentication): string | null {
  const headers = parseHeaderBlock(headerBlock);
  const subject = headers.subject;
  const recipients = session.envelope.rcptTo.map((r) => ({ address: asciiRecipient(r.address), domain: recipientDomain(r.address) ?? '' }));
  return rules.atData(recipients, {
    sender: session.envelope.mailFrom ? asciiRecipient(session.envelope.mailFrom.address) : '',
    subject: Array.isArray(subject) ? subject[0] ?? '' : subject ?? '',
    headers,
    auth: verdicts.auth,
    spam: (verdicts as { spam?: { action: string } | null }).spam ?? null,
  });
}
