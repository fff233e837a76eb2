// Checks that a webhook request came from the service: the HMAC-SHA256 under
// the webhook's secret of `<X-Service-Timestamp>.<raw body>`, sent as
// `X-Service-Signature: sha256=<hex>`, with a timestamp near now (replays of an
// old request are refused). Web Crypto's verify compares in constant time.

export interface VerifyWebhookInput {
  /** The request body exactly as received: bytes or the undecoded string, never re-encoded JSON. */
  payload: string | Uint8Array | ArrayBuffer;
  /** The request's headers (a `Headers`, or a plain object as Node's `req.headers` is). */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The webhook's signing secret (`whsec_…`). */
  secret: string;
  /** How far the timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Now, in Unix seconds (for tests). */
  now?: number;
}

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

const header = (headers: VerifyWebhookInput['headers'], name: string): string | undefined => {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const found = Object.entries(headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  return Array.isArray(found) ? found[0] : found;
};

/** Resolves with the parsed event when the signature and timestamp check out; throws WebhookVerificationError otherwise. */
export async function verifyWebhook<Event = { event: string; timestamp: string; data: unknown }>(input: VerifyWebhookInput): Promise<Event> {
  const timestamp = header(input.headers, 'x-service-timestamp');
  const signature = header(input.headers, 'x-service-signature');
  if (!timestamp || !/^\d+$/.test(timestamp)) throw new WebhookVerificationError('missing or malformed X-Service-Timestamp');
  const hex = /^sha256=([0-9a-f]{64})$/i.exec(signature ?? '')?.[1];
  if (!hex) throw new WebhookVerificationError('missing or malformed X-Service-Signature');
  const now = input.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (input.toleranceSeconds ?? 300)) throw new WebhookVerificationError('timestamp outside the tolerance');

  const body = typeof input.payload === 'string' ? new TextEncoder().encode(input.payload)
    : input.payload instanceof Uint8Array ? input.payload : new Uint8Array(input.payload);
  const prefix = new TextEncoder().encode(`${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(input.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const given = new Uint8Array(hex.match(/../g)!.map((b) => parseInt(b, 16)));
  if (!(await crypto.subtle.verify('HMAC', key, given, signed))) throw new WebhookVerificationError('signature does not match');
  return JSON.parse(new TextDecoder().decode(body)) as Event;
}
