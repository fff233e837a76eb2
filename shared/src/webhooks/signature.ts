// Webhook signatures: `X-Service-Signature: sha256=<hex>`, the HMAC-SHA256
// keyed with the webhook's secret over `<X-Service-Timestamp>.<raw body>`.
// WebCrypto only, so the Worker (signing) and receivers on Node 20+, Deno,
// Bun or Workers (verifying) use the same code.

export const SIGNATURE_HEADER = 'X-Service-Signature';
export const TIMESTAMP_HEADER = 'X-Service-Timestamp';
/** How far a timestamp may be from the receiver's clock, either way (the spec's recommendation). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const encoder = new TextEncoder();

const hmacKey = (secret: string, usage: 'sign' | 'verify') =>
  crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [usage]);

const hex = (bytes: ArrayBuffer) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');

/**
 * The `X-Service-Signature` value for one delivery.
 * @param timestamp Unix seconds, as sent in `X-Service-Timestamp`
 * @example const signature = await signWebhook(secret, String(Math.floor(Date.now() / 1000)), body);
 */
export async function signWebhook(secret: string, timestamp: string, rawBody: string | Uint8Array): Promise<string> {
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  const signed = concat(encoder.encode(`${timestamp}.`), body);
  return `sha256=${hex(await crypto.subtle.sign('HMAC', await hmacKey(secret, 'sign'), signed))}`;
}

export type WebhookVerdict =
  | { ok: true; timestamp: number }
  | { ok: false; problem: 'missing timestamp' | 'malformed timestamp' | 'timestamp outside tolerance' | 'missing signature' | 'malformed signature' | 'signature mismatch' };

/**
 * Checks a received delivery. Pass the body exactly as received (before any
 * JSON parsing); the comparison is constant-time (WebCrypto's HMAC verify).
 * @example
 * const verdict = await verifyWebhook({ secret, rawBody: await req.text(),
 *   timestamp: req.headers.get('x-service-timestamp'), signature: req.headers.get('x-service-signature') });
 * if (!verdict.ok) return new Response(verdict.problem, { status: 401 });
 */
export async function verifyWebhook(input: {
  secret: string;
  rawBody: string | Uint8Array;
  timestamp: string | null | undefined;
  signature: string | null | undefined;
  toleranceSeconds?: number;
  /** Unix seconds; the clock by default. */
  now?: number;
}): Promise<WebhookVerdict> {
  const { secret, rawBody, timestamp, signature, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS } = input;
  if (!timestamp) return { ok: false, problem: 'missing timestamp' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, problem: 'malformed timestamp' };
  const sentAt = Number(timestamp);
  const now = input.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - sentAt) > toleranceSeconds) return { ok: false, problem: 'timestamp outside tolerance' };
  if (!signature) return { ok: false, problem: 'missing signature' };
  const m = /^sha256=([0-9a-f]{64})$/i.exec(signature.trim());
  if (!m) return { ok: false, problem: 'malformed signature' };
  const mac: Uint8Array<ArrayBuffer> = Uint8Array.from(m[1]!.match(/../g)!, (h) => parseInt(h, 16));
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  const valid = await crypto.subtle.verify('HMAC', await hmacKey(secret, 'verify'), mac, concat(encoder.encode(`${timestamp}.`), body));
  return valid ? { ok: true, timestamp: sentAt } : { ok: false, problem: 'signature mismatch' };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(new ArrayBuffer(a.length + b.length));
  out.set(a);
  out.set(b, a.length);
  return out;
}
