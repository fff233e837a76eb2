// What an SMTP attempt's end means for the recipient (docs/sending.md):
// 2xx sent; 4xx, no answer or a connection failure deferred; 5xx failed.
import type { OutboundOutcome } from '@edgemail/shared';

/** How one attempt at one host ended. */
export interface AttemptOutcome {
  outcome: OutboundOutcome;
  /** The server's reply code; null when no SMTP answer came. */
  smtp_code: number | null;
  /** The server's full reply text, or why there was none. */
  reply: string;
  /**
   * Whether the next host may be tried: true only when the host was never
   * reached for the message (no connection, no greeting, no TLS), so that a
   * message a host may have accepted is never sent to a second one.
   */
  tryNextHost: boolean;
}

/** By reply code: 2xx sent, 5xx failed, anything else (4xx, a code outside SMTP's) deferred. */
export function outcomeOfCode(code: number): OutboundOutcome {
  if (code >= 200 && code < 300) return 'sent';
  if (code >= 500 && code < 600) return 'failed';
  return 'deferred';
}

/** The leading reply code of `text` (`250 2.0.0 Ok` → 250), or null. */
export function replyCode(text: string | undefined): number | null {
  const match = /^([2-5]\d\d)\b/.exec(text ?? '');
  return match ? Number(match[1]) : null;
}

/** The fields nodemailer puts on its errors. */
interface SmtpError {
  message?: string;
  name?: string;
  code?: string;
  command?: string;
  response?: string;
  responseCode?: number;
  timeoutType?: string;
}

/** Timeouts before anything about the message was said: another host may be tried. */
const SETUP_TIMEOUTS = new Set(['CONNECT_TIMEOUT', 'GREETING_TIMEOUT', 'UPGRADE_TIMEOUT']);
/** Failures to reach or set up a session (no SMTP reply). */
const CONNECTION_CODES = new Set(['ESOCKET', 'ECONNECTION', 'EDNS', 'ETLS']);

export interface ClassifyContext {
  /** `host` of the target, for messages. */
  host: string;
  /** What demanded STARTTLS, when something did. */
  requiredBy: string | null;
  /** The transport's timeouts, for messages. */
  timeouts: { connectionMs: number; greetingMs: number; socketMs: number };
}

/**
 * Classifies an error from nodemailer's `sendMail`.
 *
 * - An SMTP reply (`responseCode`) decides by its code, with the full reply as `reply`:
 *   RCPT 550 → failed 550, DATA 451 → deferred 451, a 421 greeting → deferred 421.
 *   The exception: a server that does not take STARTTLS while it was required is
 *   deferred with `STARTTLS required by <setting> but not offered by <host>`.
 * - No reply: refused connection, reset, DNS, TLS handshake, timeouts → deferred
 *   with the error's message; the next host may be tried unless the session had
 *   got as far as an idle timeout (the message may have been taken).
 */
export function classifySendError(err: unknown, context: ClassifyContext): AttemptOutcome {
  const e = (err ?? {}) as SmtpError;
  const message = e.message ?? String(err);
  if (e.name === 'AbortError' || e.code === 'ABORT_ERR') {
    return { outcome: 'deferred', smtp_code: null, reply: 'delivery interrupted: the relay node is stopping', tryNextHost: false };
  }
  if (e.code === 'ETLS' && e.command === 'STARTTLS' && context.requiredBy && typeof e.responseCode === 'number') {
    // 454 is "TLS not available now" from a server that offers it; anything else means it has no STARTTLS.
    const reply = e.responseCode === 454
      ? `STARTTLS required by ${context.requiredBy} but refused by ${context.host}: ${e.response ?? message}`
      : `STARTTLS required by ${context.requiredBy} but not offered by ${context.host}`;
    return { outcome: 'deferred', smtp_code: null, reply, tryNextHost: true };
  }
  if (typeof e.responseCode === 'number' && e.responseCode > 0) {
    return { outcome: outcomeOfCode(e.responseCode), smtp_code: e.responseCode, reply: e.response || message, tryNextHost: false };
  }
  if (e.code === 'ETIMEDOUT') {
    const limit = e.timeoutType === 'CONNECT_TIMEOUT' ? context.timeouts.connectionMs
      : e.timeoutType === 'SOCKET_TIMEOUT' ? context.timeouts.socketMs : context.timeouts.greetingMs;
    return {
      outcome: 'deferred',
      smtp_code: null,
      reply: `no answer from ${context.host} within ${limit} ms (${message})`,
      tryNextHost: SETUP_TIMEOUTS.has(e.timeoutType ?? ''),
    };
  }
  if (e.code === 'EENVELOPE' && e.command === 'API') {
    // nodemailer refused the addresses before any connection (CR, LF, angle brackets): never deliverable.
    return { outcome: 'failed', smtp_code: null, reply: `invalid envelope: ${message}`, tryNextHost: false };
  }
  if (e.code === 'EMESSAGE' && e.command === 'MAIL FROM') {
    // nodemailer checked the server's advertised SIZE: this server will never take the message.
    return { outcome: 'failed', smtp_code: null, reply: `${context.host} does not take a message this large (${message})`, tryNextHost: false };
  }
  if (e.code && CONNECTION_CODES.has(e.code) && (e.command === 'CONN' || e.command === 'STARTTLS')) {
    return { outcome: 'deferred', smtp_code: null, reply: message, tryNextHost: true };
  }
  return { outcome: 'deferred', smtp_code: null, reply: message, tryNextHost: false };
}
