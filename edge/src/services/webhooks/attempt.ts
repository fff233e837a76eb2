// One delivery request: the signed POST of an envelope to a webhook URL,
// bounded by `webhook.timeout`, redirects not followed. What it returns is
// what the attempt record keeps.
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, signWebhook } from '@edgemail/shared';
import { checkWebhookTarget } from '../../net/public-target.js';

/** Bytes of the receiver's answer kept in the attempt record. */
export const RESPONSE_EXCERPT_BYTES = 1024;
/** Characters of an attempt's error kept: it can carry receiver-chosen text (a Location header, a socket error). */
export const ERROR_TEXT_MAX = 512;

const capped = (text: string) => (text.length > ERROR_TEXT_MAX ? `${text.slice(0, ERROR_TEXT_MAX - 1)}…` : text);

export interface AttemptTarget {
  url: string;
  secret: string;
  deliveryId: string;
  event: string;
}

export interface AttemptOptions {
  timeoutMs: number;
  dohUrl: string;
  allowPrivateTargets: boolean;
}

export interface AttemptOutcome {
  ok: boolean;
  startedAt: Date;
  durationMs: number;
  /** The receiver's HTTP status; null when no answer came. */
  statusCode: number | null;
  /** Why the attempt failed; null on success. */
  error: string | null;
  responseExcerpt: string;
}

/**
 * @param body the envelope exactly as sent and signed (`envelopeBody`)
 */
export async function attemptDelivery(target: AttemptTarget, body: string, opts: AttemptOptions): Promise<AttemptOutcome> {
  const startedAt = new Date();
  const started = performance.now();
  const outcome = (o: Omit<AttemptOutcome, 'startedAt' | 'durationMs'>): AttemptOutcome =>
    ({ ...o, error: o.error === null ? null : capped(o.error), startedAt, durationMs: Math.round(performance.now() - started) });

  // Checked again before every request: DNS may have changed since the webhook was created.
  if (!opts.allowPrivateTargets) {
    const verdict = await checkWebhookTarget(target.url, { dohUrl: opts.dohUrl, allowPrivate: false, timeoutMs: opts.timeoutMs });
    if (!verdict.ok) return outcome({ ok: false, statusCode: null, error: `target refused: ${verdict.problem}`, responseExcerpt: '' });
  }

  const timestamp = String(Math.floor(Date.now() / 1000));
  const signal = AbortSignal.timeout(opts.timeoutMs);
  try {
    const res = await fetch(target.url, {
      method: 'POST',
      redirect: 'manual',
      signal,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'edgemail-webhooks/1',
        [TIMESTAMP_HEADER]: timestamp,
        [SIGNATURE_HEADER]: await signWebhook(target.secret, timestamp, body),
        // The same on every attempt of one delivery: receivers can drop repeats by it.
        'X-Service-Delivery-Id': target.deliveryId,
        'X-Service-Event': target.event,
      },
      body,
    });
    const responseExcerpt = await excerpt(res);
    if (res.status >= 200 && res.status < 300) return outcome({ ok: true, statusCode: res.status, error: null, responseExcerpt });
    const error = res.status >= 300 && res.status < 400
      ? `redirect to ${res.headers.get('location') ?? '(no location)'} not followed`
      : `receiver answered ${res.status}`;
    return outcome({ ok: false, statusCode: res.status, error, responseExcerpt });
  } catch (e) {
    const error = signal.aborted ? `no answer within ${opts.timeoutMs} ms` : `request failed: ${e instanceof Error ? e.message : String(e)}`;
    return outcome({ ok: false, statusCode: null, error, responseExcerpt: '' });
  }
}

/** The first RESPONSE_EXCERPT_BYTES of the body as text; the rest is not read. */
async function excerpt(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // A body cut short (timeout, reset) still has its status; keep what arrived.
  } finally {
    reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(Math.min(size, RESPONSE_EXCERPT_BYTES));
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk.subarray(0, bytes.length - at), at);
    at += Math.min(chunk.length, bytes.length - at);
    if (at >= bytes.length) break;
  }
  // PostgreSQL text cannot hold NUL.
  return new TextDecoder().decode(bytes).replaceAll('\u0000', '');
}
