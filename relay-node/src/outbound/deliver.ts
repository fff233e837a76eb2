// Hands signed bytes to an SMTP server with nodemailer's SMTP transport, one
// recipient per session, trying the plan's hosts in order while they cannot
// be reached.
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { createTransport } from 'nodemailer';
import type { OutboundOutcome } from '@edgemail/shared';
import { classifySendError, outcomeOfCode, replyCode, type AttemptOutcome } from './classify.js';
import type { SmtpTarget } from './mx-lookup.js';
import type { SmtpPlan } from './route.js';
import type { TransportPool } from './transport-pool.js';

/** Time limits of one SMTP session, ms. */
export interface DeliveryTimeouts {
  /** TCP connect. Default 30000. */
  connectionMs: number;
  /** The greeting (and a TLS upgrade) once connected. Default 60000. */
  greetingMs: number;
  /** Silence from the server at any later point (RFC 5321 section 4.5.3.2 allows minutes). Default 120000. */
  socketMs: number;
}

export const DEFAULT_DELIVERY_TIMEOUTS: DeliveryTimeouts = { connectionMs: 30_000, greetingMs: 60_000, socketMs: 120_000 };

export interface DeliverOptions {
  /** The EHLO name: `outbound.helo_name` (helo-name.ts). */
  name: string;
  timeouts?: Partial<DeliveryTimeouts>;
  /** Aborting ends the session (the attempt is deferred: `delivery interrupted`). */
  signal?: AbortSignal;
  /** Epoch ms from which no host is tried, the first included (the lease's end less a margin); a function when the lease may be renewed meanwhile. */
  deadline?: number | (() => number);
  /** PEM certificates trusted beside the system's when verifying configured servers (tests; a private CA). */
  extraCa?: string[];
  /** Reused sessions per destination; without it, one session per message. */
  transports?: TransportPool;
}

/** How the delivery of one message to one recipient ended. */
export interface DeliveryOutcome {
  outcome: OutboundOutcome;
  smtp_code: number | null;
  reply: string;
  /** `host:port` of the last host tried, or null when none was. */
  server: string | null;
  /** Every host tried, in order, with how it ended (for the log). */
  tried: { server: string; reply: string }[];
}

/**
 * Sends `bytes` with envelope `from` → `to` along `plan`: the first target
 * that answers decides (its reply, whatever it is); a target that cannot be
 * reached (refused, reset, no greeting, TLS failure, STARTTLS missing where
 * required) passes to the next. Never throws.
 *
 * @example const outcome = await deliverMessage(plan, { from: 'a@acme.test', to: 'b@example.org' }, bytes, { name: 'relay1.acme.net' });
 */
export async function deliverMessage(plan: SmtpPlan, envelope: { from: string; to: string }, bytes: Buffer, options: DeliverOptions): Promise<DeliveryOutcome> {
  const timeouts = { ...DEFAULT_DELIVERY_TIMEOUTS, ...options.timeouts };
  const tried: DeliveryOutcome['tried'] = [];
  const deadline = options.deadline;
  const pastDeadline = () => deadline !== undefined && Date.now() >= (typeof deadline === 'function' ? deadline() : deadline);
  let last: AttemptOutcome | null = null;
  let server: string | null = null;
  for (const target of plan.targets) {
    // No host (the first included) is tried once the lease is nearly over: another node may hold it by then.
    if (pastDeadline()) break;
    if (options.signal?.aborted) break;
    server = `${target.host}:${target.port}`;
    last = await attempt(plan, target, envelope, bytes, options, timeouts);
    tried.push({ server: target.address && target.address !== target.host ? `${server} (${target.address})` : server, reply: last.reply });
    if (!last.tryNextHost) break;
  }
  if (!last) {
    const reply = options.signal?.aborted ? 'delivery interrupted: the relay node is stopping'
      : pastDeadline() ? 'delivery not started: the lease ended first; tried again later'
        : 'no host to deliver to';
    return { outcome: 'deferred', smtp_code: null, reply, server, tried };
  }
  return { outcome: last.outcome, smtp_code: last.smtp_code, reply: last.reply, server, tried };
}

async function attempt(
  plan: SmtpPlan,
  target: SmtpTarget,
  envelope: { from: string; to: string },
  bytes: Buffer,
  options: DeliverOptions,
  timeouts: DeliveryTimeouts,
): Promise<AttemptOutcome> {
  // Connect to the resolved address, but speak TLS to the host's name (SNI).
  const servername = target.address && !isIP(target.host) ? target.host : undefined;
  const transportOptions = {
    host: target.address ?? target.host,
    port: target.port,
    secure: plan.secure,
    requireTLS: !plan.secure && plan.starttls === 'required',
    ignoreTLS: !plan.secure && plan.starttls === 'never',
    opportunisticTLS: !plan.secure && plan.starttls === 'opportunistic',
    name: options.name,
    auth: plan.auth ?? undefined,
    connectionTimeout: timeouts.connectionMs,
    greetingTimeout: timeouts.greetingMs,
    socketTimeout: timeouts.socketMs,
    tls: plan.verifyCertificate
      ? { servername, ...(options.extraCa?.length ? { ca: [...rootCertificates, ...options.extraCa] } : {}) }
      : { rejectUnauthorized: false, servername },
    logger: false,
  };
  const mail = { envelope: { from: envelope.from, to: [envelope.to] }, raw: bytes, signal: options.signal };
  const single = options.transports ? null : createTransport(transportOptions);
  try {
    const info = single ? await single.sendMail(mail) : await options.transports!.send(transportOptions, mail);
    const response = String(info.response ?? '');
    const code = replyCode(response) ?? 250;
    return { outcome: outcomeOfCode(code), smtp_code: code, reply: response || `${code}`, tryNextHost: false };
  } catch (err) {
    const outcome = classifySendError(err, { host: target.host, requiredBy: plan.requiredBy, timeouts });
    // A destination that could not be reached starts with fresh sessions next time.
    if (outcome.tryNextHost) options.transports?.forget(transportOptions);
    return outcome;
  } finally {
    single?.close();
  }
}
