// POST /webhooks/ses (issue 17, docs/ses.md): Amazon SNS messages signed by a
// stand-in SNS with its own CA on a loopback port (the edge trusts it through
// `ses.extra_sns_url_prefixes`, the testing seam; production trusts only
// https on sns.<region>.amazonaws.com). A confirmation is confirmed, SES
// bounces and complaints about a real sent email are recorded, suppress and
// fire their events once, and every refusal changes nothing.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { sesNotification, startSnsStandIn } from './support/sns.js';
import { useTenantStack } from './support/tenant-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { awayFromWindowEdge, eventually } from './support/wait.js';

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:edgemail-ses';
const OTHER_TOPIC = 'arn:aws:sns:us-east-1:999999999999:someone-else';
const RATE_LIMIT = 5;

const sns = await startSnsStandIn();
const env = useTenantStack({
  settings: {
    SERVICE_SES_TOPIC_ARNS: TOPIC,
    SERVICE_SES_EXTRA_SNS_URL_PREFIXES: sns.prefix,
    SERVICE_RATELIMIT_SES_WEBHOOK_PER_MINUTE: String(RATE_LIMIT),
    SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // The tests' own loopback peer forwards for the addresses each call names (X-Forwarded-For).
    SERVICE_SERVER_TRUSTED_PROXIES: '127.0.0.1',
  },
  keys: { sender: ['emails:write', 'emails:read', 'domains:write', 'suppressions:read', 'webhooks:write'] },
});
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  const domain = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.sender, body: { name: 'acme.test' } });
  expect(domain.status).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domain.body.domain.id]);
  const hook = await env.stack.call('POST', '/api/v1/webhooks', {
    token: env.keys.sender, body: { url: `${receiver.url}/hooks`, events: ['email.bounced', 'email.complained'] },
  });
  expect(hook.status).toBe(201);
});
afterAll(async () => {
  await receiver?.close();
  await sns.close();
});

let addressSeq = 0;
/**
 * Posts as SNS does (text/plain, the type header), each call from an address
 * of its own unless told, so that only the rate-limit test fills a window.
 */
function post(message: unknown, opts: { typeHeader?: string | null; from?: string; raw?: string } = {}) {
  const type = opts.typeHeader === undefined ? (message as { Type?: string }).Type : opts.typeHeader;
  const headers: Record<string, string> = {
    'content-type': 'text/plain; charset=UTF-8',
    'x-forwarded-for': opts.from ?? `198.51.100.${++addressSeq % 250}`,
    ...(type ? { 'x-amz-sns-message-type': type } : {}),
  };
  return env.stack.call('POST', '/webhooks/ses', { headers, rawBody: opts.raw ?? JSON.stringify(message) });
}

/** A queued email marked sent, as a relay node reports it: its id and the Message-ID it went out with. */
async function sentEmail(to = `r-${crypto.randomUUID().slice(0, 8)}@example.org`) {
  const r = await env.stack.call('POST', '/api/v1/emails/send', { token: env.keys.sender, body: { from: 'news@acme.test', to: [to], subject: 'Hello', text: 'hi' } });
  expect(r.status).toBe(201);
  const id: string = r.body.emails[0].id;
  const { rows: [row] } = await env.stack.sql.query(
    `UPDATE emails e SET status = 'sent', sent_at = now(), attempts = 1, next_attempt_at = null FROM outbound_messages m
     WHERE e.id = $1 AND m.id = e.message_id RETURNING m.message_id`, [id]);
  return { id, to, messageId: row.message_id as string };
}

/** What a notification may change about an email: its row, bounces, suppression, events. */
async function stateOf(email: { id: string; to: string }) {
  const q = async (text: string, values: unknown[]) => (await env.stack.sql.query(text, values)).rows;
  return {
    status: (await q('SELECT status FROM emails WHERE id = $1', [email.id]))[0].status as string,
    bounces: await q('SELECT type, source, source_ref, smtp_code, status, diagnostic, remote_mta, feedback_type, original_message_id FROM bounces WHERE email_id = $1', [email.id]),
    suppressions: await q('SELECT reason, detail, source_email_id FROM suppressions WHERE address = $1', [email.to]),
    events: (await q(`SELECT event FROM outbox WHERE data->>'id' = $1 ORDER BY id`, [email.id])).map((r) => r.event as string),
  };
}

const notification = (kind: 'Bounce' | 'Complaint' | 'Delivery', email: { messageId: string; to: string }, opts: Parameters<typeof sesNotification>[3] & { version?: '1' | '2' } = {}) =>
  sns.message('Notification', TOPIC, { Message: sesNotification(kind, email.messageId, [email.to], opts) }, { version: opts.version });

describe('subscription', () => {
  test('a SubscriptionConfirmation is confirmed by fetching its SubscribeURL', async () => {
    const message = sns.message('SubscriptionConfirmation', TOPIC, {});
    const before = sns.requests().length;
    const r = await post(message);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ outcome: 'confirmed' });
    expect(sns.requests().slice(before).filter((p) => p.startsWith('/confirm?'))).toEqual([new URL(message.SubscribeURL!).pathname + new URL(message.SubscribeURL!).search]);
  });

  test('a SubscribeURL off the SNS hosts is refused, signed or not, and never fetched', async () => {
    const before = sns.requests().length;
    for (const url of ['https://evil.test/confirm?Token=x', 'http://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=x']) {
      const r = await post(sns.message('SubscriptionConfirmation', TOPIC, { SubscribeURL: url }));
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(/^SubscribeURL must be/);
    }
    expect(sns.requests().slice(before).filter((p) => p.startsWith('/confirm'))).toEqual([]);
  });

  test('a confirmation from a topic not in ses.topic_arns is refused and not confirmed', async () => {
    const before = sns.requests().length;
    const r = await post(sns.message('SubscriptionConfirmation', OTHER_TOPIC, {}));
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: `topic ${OTHER_TOPIC} is not in ses.topic_arns` });
    expect(sns.requests().slice(before).filter((p) => p.startsWith('/confirm'))).toEqual([]);
  });

  test('an UnsubscribeConfirmation is acknowledged, nothing fetched', async () => {
    const before = sns.requests().filter((p) => p.startsWith('/confirm')).length;
    const r = await post(sns.message('UnsubscribeConfirmation', TOPIC, {}));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ outcome: 'acknowledged' });
    expect(sns.requests().filter((p) => p.startsWith('/confirm')).length).toBe(before);
  });
});

describe('notifications', () => {
  test('a Permanent bounce of a sent email: recorded hard, the email bounced, the address suppressed, email.bounced fired; the next send is suppressed', async () => {
    const email = await sentEmail();
    const message = notification('Bounce', email, { version: '2' });
    const r = await post(message);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ outcome: 'applied', recipients: [{ address: email.to, email_id: email.id, result: 'recorded' }] });

    const state = await stateOf(email);
    expect(state.status).toBe('bounced');
    expect(state.bounces).toEqual([{
      type: 'hard', source: 'ses', source_ref: `${message.MessageId}:${email.id}`, smtp_code: 550, status: '5.1.1',
      diagnostic: 'smtp; 550 5.1.1 user unknown', remote_mta: '192.0.2.25', feedback_type: null, original_message_id: email.messageId,
    }]);
    expect(state.suppressions).toEqual([{ reason: 'hard_bounce', detail: 'smtp; 550 5.1.1 user unknown', source_email_id: email.id }]);
    expect(state.events).toEqual(['email.bounced']);

    const delivered = await eventually(async () => receiver.received().filter((q) => q.body?.data?.id === email.id), (l) => l.length > 0);
    expect(delivered[0]!.body).toMatchObject({ event: 'email.bounced', data: { id: email.id, status: 'bounced', bounce: { type: 'hard', source: 'ses', smtp_code: 550 } } });

    const again = await env.stack.call('POST', '/api/v1/emails/send', { token: env.keys.sender, body: { from: 'news@acme.test', to: [email.to], subject: 'Again', text: 'hi' } });
    expect(again.status).toBe(201);
    expect(again.body.emails[0].status).toBe('suppressed');
  });

  test('the same notification delivered twice records once', async () => {
    const email = await sentEmail();
    const message = notification('Bounce', email);
    expect((await post(message)).body.recipients).toEqual([{ address: email.to, email_id: email.id, result: 'recorded' }]);
    const second = await post(message);
    expect(second.status).toBe(200);
    expect(second.body.recipients).toEqual([{ address: email.to, email_id: email.id, result: 'duplicate' }]);
    const state = await stateOf(email);
    expect(state.bounces).toHaveLength(1);
    expect(state.events).toEqual(['email.bounced']);
  });

  test('a Complaint: recorded, the email complained, the address suppressed, email.complained fired', async () => {
    const email = await sentEmail();
    const r = await post(notification('Complaint', email, { version: '1' }));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.recipients).toEqual([{ address: email.to, email_id: email.id, result: 'recorded' }]);
    const state = await stateOf(email);
    expect(state.status).toBe('complained');
    expect(state.bounces).toMatchObject([{ type: 'complaint', source: 'ses', feedback_type: 'abuse' }]);
    expect(state.suppressions).toEqual([{ reason: 'complaint', detail: 'abuse', source_email_id: email.id }]);
    expect(state.events).toEqual(['email.complained']);
  });

  test('a Transient bounce is recorded soft and suppresses nothing', async () => {
    const email = await sentEmail();
    const r = await post(notification('Bounce', email, { bounceType: 'Transient' }));
    expect(r.body.recipients).toEqual([{ address: email.to, email_id: email.id, result: 'recorded' }]);
    const state = await stateOf(email);
    expect(state).toMatchObject({ status: 'sent', suppressions: [], events: [] });
    expect(state.bounces).toMatchObject([{ type: 'soft', smtp_code: 452, status: '4.2.2' }]);
  });

  test('a Delivery changes nothing', async () => {
    const email = await sentEmail();
    const r = await post(notification('Delivery', email));
    expect(r.body).toEqual({ outcome: 'applied', recipients: [{ address: email.to, email_id: email.id, result: 'unchanged' }] });
    expect(await stateOf(email)).toEqual({ status: 'sent', bounces: [], suppressions: [], events: [] });
  });

  test('a notification about no email of ours (unknown Message-ID, or another recipient) is acknowledged, nothing changed', async () => {
    const email = await sentEmail();
    const unknownId = await post(notification('Bounce', { ...email, messageId: `<${crypto.randomUUID()}@acme.test>` }));
    expect(unknownId.body).toEqual({ outcome: 'applied', recipients: [{ address: email.to, email_id: null, result: 'unknown_email' }] });
    // Our id with another domain: the whole Message-ID must match.
    const forged = await post(notification('Bounce', { ...email, messageId: email.messageId.replace('@acme.test', '@evil.test') }));
    expect(forged.body.recipients[0].result).toBe('unknown_email');
    const otherRecipient = await post(notification('Bounce', { ...email, to: 'someone-else@example.org' }));
    expect(otherRecipient.body.recipients).toEqual([{ address: 'someone-else@example.org', email_id: null, result: 'unknown_email' }]);
    expect(await stateOf(email)).toEqual({ status: 'sent', bounces: [], suppressions: [], events: [] });
  });

  test('a signing certificate is fetched once, then kept', async () => {
    const key = sns.signingKey();
    for (let i = 0; i < 3; i++) {
      const r = await post(sns.message('Notification', TOPIC, { Message: JSON.stringify({ eventType: 'Send', mail: {} }) }, { key }));
      expect(r.status).toBe(200);
    }
    expect(sns.requests().filter((p) => p === key.path)).toEqual([key.path]);
  });

  test('a Notification that is no SES Bounce, Complaint or Delivery is acknowledged as ignored', async () => {
    const r = await post(sns.message('Notification', TOPIC, { Message: JSON.stringify({ eventType: 'Open', mail: {}, open: {} }) }));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ outcome: 'ignored', reason: 'SES Open is not applied (only Bounce, Complaint and Delivery)' });
  });
});

/** A Bounce notification about `email` as SNS signed it at `timestamp`. */
const signedAt = (timestamp: string, email: { messageId: string; to: string }) =>
  sns.message('Notification', TOPIC, { Message: sesNotification('Bounce', email.messageId, [email.to]), Timestamp: timestamp });

describe('refusals change nothing', () => {
  test.each<[string, (email: { messageId: string; to: string }) => Parameters<typeof post>, number, RegExp]>([
    ['a tampered Message', (e) => [{ ...notification('Bounce', e), Message: sesNotification('Complaint', e.messageId, [e.to]) }], 401, /^the SNS signature does not verify$/],
    ['a signature by another key', (e) => [{ ...notification('Bounce', e), SigningCertURL: `${sns.prefix}${sns.signingKey().path.slice(1)}` }], 401, /^the SNS signature does not verify$/],
    ['SignatureVersion 1 claimed for a version 2 signature', (e) => [{ ...notification('Bounce', e, { version: '2' }), SignatureVersion: '1' }], 401, /^the SNS signature does not verify$/],
    ['an expired signing certificate', (e) => [sns.message('Notification', TOPIC, { Message: sesNotification('Bounce', e.messageId, [e.to]) },
      { key: sns.signingKey({ notBefore: new Date(Date.now() - 10 * 86_400_000), notAfter: new Date(Date.now() - 86_400_000) }) })], 401, /^the signing certificate expired on /],
    ['a SigningCertURL off the allowlist', (e) => [{ ...notification('Bounce', e), SigningCertURL: 'https://evil.test/SimpleNotificationService-x.pem' }], 400, /^SigningCertURL must be on an SNS host \(sns\.<region>\.amazonaws\.com\), not evil\.test$/],
    ['an http SigningCertURL on an SNS host', (e) => [{ ...notification('Bounce', e), SigningCertURL: 'http://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem' }], 400, /^SigningCertURL must be https$/],
    ['a SigningCertURL that is no .pem', (e) => [{ ...notification('Bounce', e), SigningCertURL: `${sns.prefix}certs/key.txt` }], 400, /^SigningCertURL must name a \.pem file$/],
    ['a topic not in ses.topic_arns', (e) => [sns.message('Notification', OTHER_TOPIC, { Message: sesNotification('Bounce', e.messageId, [e.to]) })], 403, /^topic .* is not in ses\.topic_arns$/],
    ['a type header other than Type', (e) => [notification('Bounce', e), { typeHeader: 'SubscriptionConfirmation' }], 400, /^x-amz-sns-message-type "SubscriptionConfirmation" but the body's Type is Notification$/],
    ['no type header', (e) => [notification('Bounce', e), { typeHeader: null }], 400, /^x-amz-sns-message-type is missing/],
    ['an unknown Type', (e) => [{ ...notification('Bounce', e), Type: 'Bounce' }], 400, /^unknown SNS message type "Bounce"$/],
    ['a SignatureVersion other than 1 and 2', (e) => [{ ...notification('Bounce', e), SignatureVersion: '3' }], 400, /^not an SNS message$/],
    ['malformed JSON', (e) => [{}, { raw: JSON.stringify(notification('Bounce', e)).slice(0, -1), typeHeader: 'Notification' }], 400, /^malformed JSON body$/],
    // Correctly signed, by SNS's own key: only its signed Timestamp gives a replay away (ses.max_notification_age, 1h).
    ['a notification SNS signed 2 hours ago (a replay)', (e) => [signedAt(new Date(Date.now() - 2 * 3_600_000).toISOString(), e)], 400,
      /^notification refused as a replay: its Timestamp \S+ is more than 1h old \(ses\.max_notification_age\)$/],
    ['a notification dated 10 minutes ahead', (e) => [signedAt(new Date(Date.now() + 10 * 60_000).toISOString(), e)], 400,
      /^notification refused: its Timestamp \S+ is more than 5m in the future$/],
    ['a signed Timestamp that is no time', (e) => [signedAt('yesterday', e)], 400, /^Timestamp must be an ISO 8601 time$/],
  ])('%s → refused, naming it', async (_, build, status, error) => {
    const email = await sentEmail();
    const [message, opts] = build(email);
    const r = await post(message, opts);
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(r.body.error).toMatch(error);
    expect(await stateOf(email)).toEqual({ status: 'sent', bounces: [], suppressions: [], events: [] });
  });

  test('a SigningCertURL answering 404 is 503 (SNS retries), nothing changed', async () => {
    const email = await sentEmail();
    const r = await post({ ...notification('Bounce', email), SigningCertURL: `${sns.prefix}certs/missing.pem` });
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ error: 'SigningCertURL answered 404' });
    expect(await stateOf(email)).toEqual({ status: 'sent', bounces: [], suppressions: [], events: [] });
  });
});

test('a notification SNS signed 50 minutes ago (a late retry) is inside ses.max_notification_age: applied', async () => {
  const email = await sentEmail();
  const r = await post(signedAt(new Date(Date.now() - 50 * 60_000).toISOString(), email));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ outcome: 'applied' });
  expect((await stateOf(email)).status).toBe('bounced');
});

test('each client address has ratelimit.ses_webhook_per_minute requests a minute; beyond it 429, nothing changed', async () => {
  await awayFromWindowEdge();
  const email = await sentEmail();
  const from = '203.0.113.77';
  for (let i = 0; i < RATE_LIMIT; i++) {
    const r = await post(sns.message('UnsubscribeConfirmation', TOPIC, {}), { from });
    expect(r.status).toBe(200);
    expect(r.headers.get('ratelimit-remaining')).toBe(String(RATE_LIMIT - 1 - i));
  }
  const refused = await post(notification('Bounce', email), { from });
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({ error: `rate limit exceeded: ${RATE_LIMIT} requests per minute` });
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await stateOf(email)).toEqual({ status: 'sent', bounces: [], suppressions: [], events: [] });
  expect((await post(notification('Bounce', email), { from: '203.0.113.78' })).status).toBe(200);
});


test('`edgemail export-api-spec --surface webhooks` documents the route once: no credential, its limiter, the SNS body and every refusal', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgemail-ses-'));
  try {
    const out = join(dir, 'webhooks.json');
    const cliEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_')));
    await new Promise<void>((resolve, reject) => execFile('pnpm', ['-s', 'edgemail', 'export-api-spec', '--out', out, '--surface', 'webhooks'],
      { cwd: new URL('../', import.meta.url).pathname, env: cliEnv, timeout: 60_000 }, (err, _stdout, stderr) => (err ? reject(new Error(stderr)) : resolve())));
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    const result = await new Validator().validate(doc);
    expect(result.valid, JSON.stringify(result.errors)).toBe(true);
    expect(Object.keys(doc.paths)).toEqual(['/webhooks/ses']);
    const op = doc.paths['/webhooks/ses'].post;
    expect(op.security).toEqual([]);
    expect(op['x-rate-limit']).toBe('ses_webhook');
    expect(op.requestBody.content['text/plain'].schema).toEqual({ $ref: '#/components/schemas/SnsMessage' });
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '413', '429', '503']);
    expect(Object.keys(doc.components.schemas).sort()).toEqual(['Error', 'SesWebhookResult', 'SnsMessage']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
