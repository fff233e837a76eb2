// Counting what the node does without teaching each part about metrics: the
// SMTP servers' hooks, the session caps, the edge client's fetch and the
// outbound worker's claim/deliver/report are wrapped where the node wires
// them together (node.ts). Every wrapper hands through exactly what it got.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { SMTPServer } from 'smtp-server';
import type { OutboundClaimReading, OutboundJob, OutboundResult, OutboundResultsAnswer } from '@edgemail/shared';
import type { SessionSlots } from '../smtp/session-slots.js';
import { replyClass, type NodeMetrics } from './node-metrics.js';

type Hooks = Pick<SMTPServer, 'onConnect' | 'onRcptTo' | 'onData' | 'onSecure'>;
type SmtpError = (Error & { responseCode?: number }) | null | undefined;

/** Refusals of the two session caps, by which cap refused. */
export function countSlotRefusals(metrics: NodeMetrics, listener: string, slots: SessionSlots): SessionSlots {
  return {
    take(address) {
      const taken = slots.take(address);
      if ('refused' in taken) metrics.sessionsRefused.inc({ listener, reason: taken.refused === 'total' ? 'max_sessions' : 'max_sessions_per_ip' });
      return taken;
    },
    open: (address) => slots.open(address),
  };
}

/**
 * Sessions, recipients, messages and TLS handshakes of one SMTP server, read
 * from its hooks' answers. `certificateSource` names what a handshake was
 * answered with (from its SNI name): a fixed word, never the name itself.
 */
export function instrumentSmtpServer(metrics: NodeMetrics, listener: string, server: Hooks, certificateSource: (servername: string | undefined) => string): void {
  const onConnect = server.onConnect.bind(server);
  server.onConnect = (session, callback) => onConnect(session, (err?: SmtpError) => {
    if (err) metrics.sessionsRefused.inc({ listener, reason: 'rate' });
    else metrics.sessions.inc({ listener });
    callback(err ?? undefined);
  });
  const onRcptTo = server.onRcptTo.bind(server);
  server.onRcptTo = (address, session, callback) => onRcptTo(address, session, (err?: SmtpError) => {
    metrics.recipients.inc({ listener, class: err ? replyClass(err.responseCode ?? 550) : '2xx' });
    callback(err ?? undefined);
  });
  const onData = server.onData.bind(server);
  server.onData = (stream, session, callback) => onData(stream, session, (err?: SmtpError, message?: unknown) => {
    // smtp-server's own default for an error without a code is 450.
    if (err) metrics.messages.inc({ listener, result: 'refused', class: replyClass(err.responseCode ?? 450) });
    else metrics.messages.inc({ listener, result: 'accepted', class: '2xx' });
    (callback as (e?: SmtpError, m?: unknown) => void)(err, message);
  });
  const onSecure = server.onSecure.bind(server);
  server.onSecure = (socket, session, callback) => {
    const servername = (socket as TLSSocket).servername;
    metrics.tlsHandshakes.inc({ listener, certificate: certificateSource(typeof servername === 'string' ? servername : undefined) });
    onSecure(socket, session, callback);
  };
}

/** The edge client's fetch, timed: when the edge last answered, and each request's outcome. */
export interface EdgeWatch {
  fetch: typeof fetch;
  /** Date.now() of the last answer below 500, null before the first. */
  lastAnswerAt(): number | null;
}

/** `onOutcome` hears each request's outcome: answered (below 500), error (5xx), unreachable (no answer). */
export function watchEdge(onOutcome: (outcome: 'answered' | 'error' | 'unreachable') => void, base?: typeof fetch): EdgeWatch {
  let last: number | null = null;
  const watched: typeof fetch = async (input, init) => {
    let res: Response;
    try {
      res = await (base ?? fetch)(input, init);
    } catch (err) {
      onOutcome('unreachable');
      throw err;
    }
    if (res.status < 500) {
      last = Date.now();
      onOutcome('answered');
    } else {
      onOutcome('error');
    }
    return res;
  };
  return { fetch: watched, lastAnswerAt: () => last };
}

/** Times `fn` into `histogram` under `outcome: ok | error`, rethrowing what it throws. */
async function timed<T>(histogram: NodeMetrics['forwardSeconds'], fn: () => Promise<T>, onError: () => void): Promise<T> {
  const end = histogram.startTimer();
  try {
    const value = await fn();
    end({ outcome: 'ok' });
    return value;
  } catch (err) {
    end({ outcome: 'error' });
    onError();
    throw err;
  }
}

/** Forwarding to the edge: its time, the messages acknowledged, the attempts that will be retried. */
export function timeForwarding<R, A>(metrics: NodeMetrics, forward: (request: R, signal: AbortSignal) => Promise<A>, messages: (request: R) => number) {
  return (request: R, signal: AbortSignal) => timed(metrics.forwardSeconds, async () => {
    const answer = await forward(request, signal);
    metrics.forwardedMessages.inc(messages(request));
    return answer;
  }, () => metrics.forwardRetries.inc());
}

/** The outbound worker's three calls, counted: jobs claimed, results per outcome, each delivery timed. */
export function countOutbound(metrics: NodeMetrics, calls: {
  claim: (max: number, signal: AbortSignal) => Promise<OutboundClaimReading>;
  report: (results: OutboundResult[], signal: AbortSignal) => Promise<OutboundResultsAnswer>;
  deliver: (job: OutboundJob, signal: AbortSignal) => Promise<OutboundResult>;
}): typeof calls {
  return {
    async claim(max, signal) {
      const answer = await calls.claim(max, signal);
      metrics.outboundJobs.inc({ event: 'claimed' }, answer.jobs.length);
      return answer;
    },
    async report(results, signal) {
      const answer = await calls.report(results, signal);
      for (const r of results) metrics.outboundJobs.inc({ event: r.outcome });
      return answer;
    },
    async deliver(job, signal) {
      const end = metrics.deliverySeconds.startTimer();
      try {
        const result = await calls.deliver(job, signal);
        end({ outcome: result.outcome });
        return result;
      } catch (err) {
        end({ outcome: 'deferred' });
        throw err;
      }
    },
  };
}

/** Messages (`<id>.eml`) and their bytes in a spool folder, in one listing. */
export async function spoolFigures(dir: string): Promise<{ depth: number; bytes: number }> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.eml'));
  const sizes = await Promise.all(names.map((n) => stat(join(dir, n)).then((s) => s.size, () => 0)));
  return { depth: names.length, bytes: sizes.reduce((a, b) => a + b, 0) };
}
