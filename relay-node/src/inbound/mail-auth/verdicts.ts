// The verdicts stamped on an inbound message at ingest: the spec's `auth`
// object plus what the listener needs to enforce a DMARC reject policy.
// docs/inbound.md lists every string and when it is given.
import type { Readable } from 'node:stream';
import { AUTH_VERDICTS, DMARC_POLICIES, type AuthVerdict, type DmarcPolicy, type InboundAuth, type InboundSpam } from '@edgemail/shared';

// The words, and the inbound record's `auth` field as the spec names it, are the
// shared contract's (shared/src/relay-protocol/mail-auth.ts, inbound-meta.ts).
export type { AuthVerdict, DmarcPolicy, InboundAuth };

const VERDICTS: ReadonlySet<string> = new Set(AUTH_VERDICTS);
const POLICIES: ReadonlySet<unknown> = new Set(DMARC_POLICIES);

/** One of the three words of a DMARC `p=` (or `sp=`) tag, in lower case. */
export const isDmarcPolicy = (word: unknown): word is DmarcPolicy => POLICIES.has(word);

/** The verdicts and what follows from them. */
export interface IngestAuthentication {
  auth: InboundAuth;
  /** The policy the From domain publishes for this message (`sp=` for a subdomain); null without a record. */
  dmarcPolicy: DmarcPolicy | null;
  /** DMARC failed and the domain asks receivers to reject all such mail (`p=reject`, `pct` 100). */
  dmarcReject: boolean;
  /**
   * `Received-SPF:` (RFC 7208) and `Authentication-Results:` (RFC 8601) header
   * fields naming this node, CRLF-terminated, for the stored copy.
   */
  headers: string;
  /**
   * rspamd's verdict, when the node asks one (inbound/spam/): null when the
   * check failed or timed out (the message is stored unscored); absent when off.
   */
  spam?: InboundSpam | null;
  /** The score reached the reject threshold of every recipient's project: the listener answers 550 5.7.1. */
  spamReject?: boolean;
}

/** What the verifier knows of the SMTP transaction besides the message. */
export interface AuthContext {
  /** The client's address (the PROXY header's when a trusted balancer sent one). */
  ip: string;
  /** The EHLO/HELO name. */
  helo: string;
  /** The MAIL FROM address; empty for the null sender. */
  sender: string;
  /** The RCPT TO addresses (for the spam check's envelope and the projects' thresholds). */
  rcptTo?: string[];
  /** The transaction's id in the node's log (smtp-server's session id). */
  queueId?: string;
}

/**
 * Reads a message to its end and returns its verdicts. Never rejects: a
 * failure of its own (DNS, a deadline, a stream error) becomes `temperror`.
 */
export type AuthenticateMessage = (message: Readable, context: AuthContext) => Promise<IngestAuthentication>;

/** mailauth spells one word two ways and may add words of its own; anything unknown is a permerror. */
export function toVerdict(result: string | undefined): AuthVerdict {
  if (!result) return 'none';
  if (result === 'temperr') return 'temperror';
  return VERDICTS.has(result) ? (result as AuthVerdict) : 'permerror';
}

/** The verdicts when nothing could be checked: everything `temperror`, nothing aligned. */
export function temporaryFailure(ip: string, mta: string, reason: string): IngestAuthentication {
  return {
    auth: { spf: 'temperror', dkim: 'temperror', dmarc: 'temperror', aligned: false, client_ip: ip },
    dmarcPolicy: null,
    dmarcReject: false,
    headers: `Authentication-Results: ${mta}; spf=temperror; dkim=temperror; dmarc=temperror (${reason.replace(/[\r\n()]/g, ' ')})\r\n`,
  };
}
