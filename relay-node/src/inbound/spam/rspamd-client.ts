// rspamd's HTTP protocol (`POST /checkv2`): the message streams to rspamd as
// it arrives, with the SMTP envelope in request headers, and rspamd answers
// its score, action and matched symbols as JSON. docs/inbound.md, Spam scoring.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { INBOUND_SPAM_MAX_SYMBOLS, type InboundSpam } from '@edgemail/shared';

/** What rspamd is told of the SMTP transaction (its request headers of the same names). */
export interface SpamEnvelope {
  /** `IP`: the client's address. */
  ip: string;
  /** `Helo`: the EHLO/HELO name. */
  helo: string;
  /** `From`: the MAIL FROM address; empty for the null sender. */
  from: string;
  /** `Rcpt`: one header per recipient. */
  rcpt: string[];
  /** `Queue-Id`: the spool's id for the message, to match rspamd's log with ours. */
  queueId: string;
}

/** Why a check gave no verdict: the words of `edgemail_relay_spam_check_failures_total`'s `reason`. */
export type SpamFailureReason = 'timeout' | 'unreachable' | 'error';

export class SpamCheckError extends Error {
  constructor(readonly reason: SpamFailureReason, message: string) {
    super(message);
    this.name = 'SpamCheckError';
  }
}

export interface RspamdClientOptions {
  /** rspamd's normal worker, `http://127.0.0.1:11333` (`relay_node.inbound.spam.rspamd_url`). */
  url: string;
  /**
   * Longest rspamd may take, in ms, from the message's last byte to its
   * answer, and longest it may leave the message waiting by not reading it.
   */
  timeoutMs: number;
}

/** Largest answer read: rspamd's JSON for a message is a few KiB. */
const MAX_ANSWER_BYTES = 1 << 20;

/** One check of a message: resolves to rspamd's verdict, rejects with a SpamCheckError. */
export type CheckSpam = (message: Readable, envelope: SpamEnvelope) => Promise<InboundSpam>;

/**
 * @example
 * const check = createRspamdClient({ url: 'http://127.0.0.1:11333', timeoutMs: 5000 });
 * const { score, action, symbols } = await check(stream, { ip, helo, from, rcpt, queueId });
 */
export function createRspamdClient(options: RspamdClientOptions): CheckSpam & { close(): void } {
  const endpoint = new URL('checkv2', options.url.endsWith('/') ? options.url : `${options.url}/`);
  const secure = endpoint.protocol === 'https:';
  // Kept-alive connections: one connect per message would cost more than many checks.
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;

  const check: CheckSpam = (message, envelope) => new Promise<InboundSpam>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = (err: SpamCheckError | null, verdict?: InboundSpam) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      message.off('data', onData);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(verdict!);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(new SpamCheckError('timeout', `rspamd did not answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    };
    const req = send(endpoint, { method: 'POST', agent, headers: envelopeHeaders(envelope) }, (res) => {
      readAnswer(res).then((verdict) => finish(null, verdict), (err: SpamCheckError) => finish(err));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      const unreachable = ['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE'].includes(err.code ?? '');
      finish(new SpamCheckError(unreachable ? 'unreachable' : 'error', `rspamd request failed: ${err.message}`));
    });
    // The message's own pace: a branch rspamd does not read holds the others back,
    // so a stall counts against the deadline as the wait after the last byte does.
    const onData = (chunk: Buffer) => {
      if (req.write(chunk)) return;
      message.pause();
      arm();
      req.once('drain', () => {
        clearTimeout(timer);
        message.resume();
      });
    };
    message.on('data', onData);
    message.once('end', () => {
      if (settled) return;
      req.end();
      arm();
    });
    message.once('error', (err) => finish(new SpamCheckError('error', `the message stream failed: ${err.message}`)));
    message.once('close', () => {
      if (!message.readableEnded) finish(new SpamCheckError('error', 'the message stream closed before its end'));
    });
  });
  return Object.assign(check, { close: () => agent.destroy() });
}

/** The envelope as rspamd's request headers; a value is printable ASCII (a header cannot carry more). */
export function envelopeHeaders(envelope: SpamEnvelope): Record<string, string | string[]> {
  const clean = (text: string) => text.replace(/[^\x20-\x7e]/g, '?').slice(0, 998);
  const headers: Record<string, string | string[]> = {
    'IP': clean(envelope.ip),
    'Helo': clean(envelope.helo),
    'Queue-Id': clean(envelope.queueId),
    'Rcpt': envelope.rcpt.slice(0, 1000).map(clean),
    'Transfer-Encoding': 'chunked',
  };
  // rspamd reads an absent From as the null sender; an empty header would be an address "".
  if (envelope.from) headers['From'] = clean(envelope.from);
  return headers;
}

async function readAnswer(res: IncomingMessage): Promise<InboundSpam> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > MAX_ANSWER_BYTES) throw new SpamCheckError('error', `rspamd's answer is over ${MAX_ANSWER_BYTES} bytes`);
      chunks.push(chunk);
    }
  } catch (err) {
    throw err instanceof SpamCheckError ? err : new SpamCheckError('error', `reading rspamd's answer failed: ${String(err)}`);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (res.statusCode !== 200) throw new SpamCheckError('error', `rspamd answered ${res.statusCode}: ${text.slice(0, 200)}`);
  return parseCheckv2(text);
}

/**
 * rspamd's `/checkv2` answer → the verdict kept on the record: the score, the
 * reject score rspamd itself uses (`required_score`), the action, and the
 * names of the matched symbols, heaviest first (at most 200).
 * Throws a SpamCheckError when the answer is not such an object.
 */
export function parseCheckv2(text: string): InboundSpam {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new SpamCheckError('error', `rspamd's answer is not JSON: ${text.slice(0, 100)}`);
  }
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) throw new SpamCheckError('error', 'rspamd\'s answer is not an object');
  const { score, required_score: required, action, symbols } = answer as Record<string, unknown>;
  if (typeof score !== 'number' || !Number.isFinite(score)) throw new SpamCheckError('error', 'rspamd\'s answer has no score');
  if (typeof action !== 'string' || !action) throw new SpamCheckError('error', 'rspamd\'s answer has no action');
  const matched = symbols && typeof symbols === 'object' && !Array.isArray(symbols)
    ? Object.entries(symbols as Record<string, unknown>).map(([name, symbol]) => ({
        name,
        weight: symbol && typeof symbol === 'object' && typeof (symbol as { score?: unknown }).score === 'number' ? (symbol as { score: number }).score : 0,
      }))
    : [];
  matched.sort((a, b) => b.weight - a.weight || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    score: round(score),
    required_score: typeof required === 'number' && Number.isFinite(required) ? round(required) : null,
    action: action.slice(0, 32),
    symbols: matched.slice(0, INBOUND_SPAM_MAX_SYMBOLS).map((s) => s.name.slice(0, 128)),
  };
}

/** rspamd prints 6.300000; a sum of weights may read 6.299999999. Two decimals are its own precision. */
const round = (n: number) => Math.round(n * 100) / 100;
