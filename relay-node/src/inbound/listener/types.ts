// What the inbound (MX) listener needs from the rest of the node, and what it
// hands over for each message. The listener decides SMTP replies only; the
// spool, the edge and the verdict logic come in as functions.
import type { Readable, Transform } from 'node:stream';
import type { Log } from '../../log.js';
import type { AuthenticateMessage, IngestAuthentication } from '../mail-auth/verdicts.js';
import type { NodeRules } from '../rules/node-rules.js';

/** The SMTP transaction a message arrived in, handed to `store` with it. */
export interface InboundEnvelope {
  /** smtp-server's session id, for correlating log lines. */
  sessionId: string;
  /** The client's address: the PROXY header's when a trusted balancer sent one. */
  clientAddress: string;
  clientPort: number;
  /** The name the client gave in EHLO/HELO. */
  helo: string;
  /** MAIL FROM address; empty for the null sender of bounces. */
  mailFrom: string;
  /** RCPT TO addresses, each in a domain the edge said it serves. */
  rcptTo: string[];
  /** The TLS session the message came over (STARTTLS or implicit), or null for plain text. */
  tls: { protocol: string; cipher: string } | null;
  receivedAt: Date;
  /**
   * SPF/DKIM/DMARC verdicts. They settle once the whole message has been read,
   * so `store` must read its stream to the end before awaiting them: the
   * message reaches `store` and the verifier at the pace of the slower one.
   */
  authentication: Promise<IngestAuthentication>;
}

/**
 * Writes one message durably (the spool). Resolves only after the bytes and
 * the envelope are fsynced: the listener answers 250 after that and never
 * before. When `message` errors (a size cap crossed, the client gone) it must
 * reject and leave nothing behind. It may reject with an error carrying
 * `responseCode` (and an enhanced code at the start of its message, such as
 * `451 4.3.0 ...`) to choose the reply; any other error answers 451 4.3.0.
 */
export type StoreMessage = (message: Readable, envelope: InboundEnvelope) => Promise<void>;

/** Everything the inbound listener depends on. */
export interface InboundDeps {
  /** Whether the edge has a project that registered `domain` (lower case, ASCII). */
  recipientDomainAccepted(domain: string): Promise<boolean>;
  /** Whether an accepted `domain`'s project has reached its inbound storage quota (RCPT `452 4.2.2`). */
  recipientDomainFull?(domain: string): boolean;
  store: StoreMessage;
  authenticate: AuthenticateMessage;
  log: Log;
  /**
   * Per-message transforms the data passes through, in order, before it is
   * stored and verified: the bare-line-ending normaliser plugs in here. A
   * transform refuses a message by erroring with a `responseCode` error
   * (`554 5.5.0` for `bare_newlines = reject`).
   */
  transforms?: () => Transform[];
  /**
   * Why the spool cannot take new mail now (`spool/admission.ts`), or null
   * when it can; asked at MAIL FROM and when a message's data begins, a
   * reason is answered `452 4.3.1 <reason>`. None: always accepted.
   */
  admission?: () => Promise<string | null>;
  /** Refusals by the project's routing rules (inbound/rules/node-rules.ts); none: no rule refuses. */
  rules?: NodeRules;
}
