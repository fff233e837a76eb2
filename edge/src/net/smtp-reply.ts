// SMTP replies (RFC 5321 4.2) as the probe reads them: pure functions, no
// sockets, so they are unit-tested in Node.
import { toBase64 } from '@edgemail/shared';

export interface SmtpReply {
  code: number;
  /** Every line as received, code included, without CRLF. */
  lines: string[];
}

/** A reply longer than this is not an SMTP server talking (RFC 5321 allows 512 octets a line). */
export const MAX_REPLY_CHARS = 16_384;

export class SmtpProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SmtpProtocolError';
  }
}

const LINE = /^(\d{3})([ -]|$)/;

/**
 * Collects bytes already decoded to text and hands out complete replies:
 * `250-a`, `250-b`, `250 c` is one reply. Lines may end in CRLF or a bare LF.
 *
 * @example const r = new ReplyBuffer(); r.push('220 mx ready\r\n'); r.take() // { code: 220, lines: ['220 mx ready'] }
 */
export class ReplyBuffer {
  private text = '';

  push(chunk: string): void {
    this.text += chunk;
    if (this.text.length > MAX_REPLY_CHARS) throw new SmtpProtocolError(`reply longer than ${MAX_REPLY_CHARS} characters`);
  }

  /** Whether text is waiting that no complete reply has taken yet. */
  get pending(): boolean {
    return this.text.length > 0;
  }

  /** Forgets what is buffered (after STARTTLS: plaintext sent past the 220 must not be read as TLS-protected). */
  clear(): void {
    this.text = '';
  }

  /** The next complete reply, or null until more text arrives. Throws on a line that is no reply line. */
  take(): SmtpReply | null {
    const lines: string[] = [];
    let offset = 0;
    for (;;) {
      const end = this.text.indexOf('\n', offset);
      if (end < 0) return null;
      const line = this.text.slice(offset, end).replace(/\r$/, '');
      offset = end + 1;
      const m = LINE.exec(line);
      if (!m) throw new SmtpProtocolError(`not an SMTP reply: ${JSON.stringify(line.slice(0, 200))}`);
      const code = Number(m[1]);
      if (lines.length && code !== Number(LINE.exec(lines[0]!)![1])) {
        throw new SmtpProtocolError(`reply lines with different codes: ${lines[0]!.slice(0, 3)} then ${m[1]}`);
      }
      lines.push(line);
      if (m[2] !== '-') {
        this.text = this.text.slice(offset);
        return { code, lines };
      }
    }
  }
}

/** The reply as shown to a user: its lines joined by LF. */
export const replyText = (reply: SmtpReply) => reply.lines.join('\n');

export interface EhloCapabilities {
  starttls: boolean;
  /** SASL mechanisms offered, upper case. */
  auth: string[];
}

/** What an EHLO reply offers (RFC 5321 4.1.1.1; `AUTH=` is the pre-RFC 4954 spelling some servers still send). */
export function ehloCapabilities(reply: SmtpReply): EhloCapabilities {
  const caps: EhloCapabilities = { starttls: false, auth: [] };
  for (const line of reply.lines.slice(1)) {
    const [keyword = '', ...params] = line.slice(4).trim().split(/[\s=]+/);
    const word = keyword.toUpperCase();
    if (word === 'STARTTLS') caps.starttls = true;
    if (word === 'AUTH') {
      for (const p of params) if (p && !caps.auth.includes(p.toUpperCase())) caps.auth.push(p.toUpperCase());
    }
  }
  return caps;
}

/** The mechanism the probe uses: PLAIN when offered, else LOGIN, else none it speaks. */
export function chooseAuthMechanism(offered: string[]): 'PLAIN' | 'LOGIN' | null {
  if (offered.includes('PLAIN')) return 'PLAIN';
  if (offered.includes('LOGIN')) return 'LOGIN';
  return null;
}

/** base64 of UTF-8 text (`btoa` takes Latin-1 only). */
export function base64Utf8(text: string): string {
  return toBase64(new TextEncoder().encode(text));
}

/** The AUTH PLAIN initial response (RFC 4616): `\0user\0password`, base64. */
export const authPlainResponse = (username: string, password: string) => base64Utf8(`\0${username}\0${password}`);
