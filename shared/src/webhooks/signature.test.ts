import { describe, expect, test } from 'vitest';
import { signWebhook, verifyWebhook } from './signature.js';

const secret = 'whsec_test';
const body = '{"event":"inbound.received","timestamp":"2026-11-26T00:00:00.000Z","data":{"id":"x"}}';
const now = 1_800_000_000;

describe('signWebhook', () => {
  test('is the HMAC-SHA256 of `<timestamp>.<body>` keyed with the secret (vector from Python\'s hmac module)', async () => {
    const expected = 'bf607f1254806ca83996d294e46f270f644d284377fd11a7c1d44e4a250e4394';
    expect(await signWebhook(secret, String(now), body)).toBe(`sha256=${expected}`);
    expect(await signWebhook(secret, String(now), new TextEncoder().encode(body))).toBe(`sha256=${expected}`);
  });
});

describe('verifyWebhook', () => {
  const signed = async (timestamp = now) => ({ secret, rawBody: body, timestamp: String(timestamp), signature: await signWebhook(secret, String(timestamp), body), now });

  test('accepts its own signature within five minutes either way', async () => {
    expect(await verifyWebhook(await signed())).toEqual({ ok: true, timestamp: now });
    expect((await verifyWebhook(await signed(now - 300))).ok).toBe(true);
    expect((await verifyWebhook(await signed(now + 300))).ok).toBe(true);
  });

  test.each([
    ['too old', -301], ['too far ahead', 301],
  ])('refuses a timestamp %s', async (_name, offset) => {
    expect(await verifyWebhook(await signed(now + offset))).toEqual({ ok: false, problem: 'timestamp outside tolerance' });
  });

  test('refuses a changed body, another secret, missing or malformed headers', async () => {
    const good = await signed();
    expect(await verifyWebhook({ ...good, rawBody: `${body} ` })).toEqual({ ok: false, problem: 'signature mismatch' });
    expect(await verifyWebhook({ ...good, secret: 'whsec_other' })).toEqual({ ok: false, problem: 'signature mismatch' });
    expect(await verifyWebhook({ ...good, timestamp: null })).toEqual({ ok: false, problem: 'missing timestamp' });
    expect(await verifyWebhook({ ...good, timestamp: '17e8' })).toEqual({ ok: false, problem: 'malformed timestamp' });
    expect(await verifyWebhook({ ...good, signature: undefined })).toEqual({ ok: false, problem: 'missing signature' });
    expect(await verifyWebhook({ ...good, signature: good.signature.replace('sha256=', 'sha1=') })).toEqual({ ok: false, problem: 'malformed signature' });
    // The signature of another timestamp does not carry over.
    expect(await verifyWebhook({ ...good, timestamp: String(now + 1) })).toEqual({ ok: false, problem: 'signature mismatch' });
  });
});
