// What the spool keeps beside each message's bytes: everything the forwarder
// needs to build the edge's `meta` later, even after a restart.
import { isIPv6 } from 'node:net';
import type { InboundSpam } from '@edgemail/shared';
import type { DmarcPolicy, IngestAuthentication, InboundAuth } from '../mail-auth/verdicts.js';
import { asciiRecipient } from '../listener/on-rcpt-to.js';
import type { InboundEnvelope } from '../listener/types.js';

/** `<id>.json` in the spool. Field names follow the edge's `meta` where they match. */
export interface SpooledMeta {
  format: 1;
  /** The listener the message came in on. */
  listener: 'inbound';
  received_at: string;
  /** smtp-server's session id, to match log lines. */
  session_id: string;
  client_ip: string;
  client_port: number;
  helo: string;
  /** Empty for the null sender (bounces); the domain as an A-label, lower case, like `rcpt_to`. */
  mail_from: string;
  /** Domains as A-labels, lower case (`asciiRecipient`): the form the edge registers names in. */
  rcpt_to: string[];
  tls: { protocol: string; cipher: string } | null;
  auth: InboundAuth;
  dmarc_policy: DmarcPolicy | null;
  /** The client was answered 550 5.7.1 (DMARC failure on a p=reject domain); the record is kept. */
  smtp_rejected: boolean;
  /** rspamd's verdict (null: not scored); absent in files of nodes older than spam scoring. */
  spam?: InboundSpam | null;
  /** The client was answered 550 5.7.1 for the spam score (every recipient's project refuses it); the record is kept. */
  spam_rejected?: boolean;
  /**
   * `Received:`, `Received-SPF:` and `Authentication-Results:` header fields
   * (CRLF-terminated) that go in front of the stored bytes when forwarded,
   * as every MTA adds its trace to the mail it accepts.
   */
  trace_headers: string;
}

/**
 * The spool metadata of a message, once its verdicts are known.
 *
 * @example spool.write(body, envelope.authentication.then((v) => spooledMeta(envelope, v, 'mx1.example.com')))
 */
export function spooledMeta(envelope: InboundEnvelope, verdicts: IngestAuthentication, hostName: string): SpooledMeta {
  // Normalised here, once: the forwarder, the edge and the Received trace all read this list.
  // One address written as U-label and as A-label in one transaction is one recipient.
  const rcptTo = [...new Set(envelope.rcptTo.map(asciiRecipient))];
  return {
    format: 1,
    listener: 'inbound',
    received_at: envelope.receivedAt.toISOString(),
    session_id: envelope.sessionId,
    client_ip: envelope.clientAddress,
    client_port: envelope.clientPort,
    helo: envelope.helo,
    // smtp-server decodes the sender's domain to U-labels as well; stored as the edge writes names.
    mail_from: asciiRecipient(envelope.mailFrom),
    rcpt_to: rcptTo,
    tls: envelope.tls,
    auth: verdicts.auth,
    dmarc_policy: verdicts.dmarcPolicy,
    smtp_rejected: verdicts.dmarcReject,
    spam: verdicts.spam ?? null,
    spam_rejected: verdicts.spamReject ?? false,
    trace_headers: receivedHeader({ ...envelope, rcptTo }, hostName) + verdicts.headers,
  };
}

/**
 * RFC 5321 section 4.4 trace: who handed the message over, to whom, when.
 * The recipient is named only when there is one (naming several would tell
 * each of them about the others).
 */
export function receivedHeader(envelope: InboundEnvelope, hostName: string): string {
  const clean = (text: string) => text.replace(/[\r\n\t]+/g, ' ').replace(/[^\x20-\x7e]/g, '?').slice(0, 255);
  const helo = clean(envelope.helo) || 'unknown';
  const via = envelope.tls ? `ESMTPS (${clean(envelope.tls.protocol)} ${clean(envelope.tls.cipher)})` : 'ESMTP';
  const forClause = envelope.rcptTo.length === 1 ? `\r\n\tfor <${clean(envelope.rcptTo[0]!)}>` : '';
  const date = envelope.receivedAt.toUTCString().replace(/GMT$/, '+0000');
  // An address literal names its family for IPv6 (RFC 5321 section 4.1.3): [IPv6:2001:db8::1].
  const address = clean(envelope.clientAddress);
  const literal = isIPv6(address) ? `IPv6:${address}` : address;
  return `Received: from ${helo} ([${literal}])\r\n\tby ${clean(hostName)} with ${via} id ${clean(envelope.sessionId)}${forClause};\r\n\t${date}\r\n`;
}
