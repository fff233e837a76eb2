// What a suppression does (issue 17): a send to a suppressed address gets a
// `suppressed` row naming the reason, and inbound mail from it is stored
// `rejected`, only while the entry applies: one past its `expires_at` no
// longer suppresses either.
import { beforeAll, describe, expect, test } from 'vitest';
import { enroll, forward, inboundMeta, registerDomain, type EnrolledNode } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';

const env = useTenantStack({
  keys: { sender: ['emails:write', 'emails:read'], suppressor: ['suppressions:write'], domains: ['domains:write'] },
});
let node: EnrolledNode;

beforeAll(async () => {
  const r = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.domains, body: { name: 'acme.test' } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now(), ownership_proven_at = now() WHERE id = $1', [r.body.domain.id]);
  node = await enroll(env.stack, (await env.tenant.key(['relay:write'])).token);
});

const suppress = async (address: string, body: Record<string, unknown> = {}) => {
  const r = await env.stack.call('POST', '/api/v1/suppressions', { token: env.keys.suppressor, body: { address, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.suppression.id as string;
};
/** Moves an entry's expiry into the past, as time passing would. */
const expire = (id: string) => env.stack.sql.query("UPDATE suppressions SET expires_at = now() - interval '1 second' WHERE id = $1", [id]);
const local = () => `u${crypto.randomUUID().slice(0, 8)}`;

describe('sends', () => {
  test('each suppressed row names its entry\'s reason; an entry past expires_at no longer suppresses', async () => {
    const [bounced, unsubscribed, expiring, expired] = [local(), local(), local(), local()].map((l) => `${l}@example.org`) as [string, string, string, string];
    await suppress(bounced, { reason: 'hard_bounce' });
    await suppress(unsubscribed, { reason: 'unsubscribe', expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    await suppress(expiring, { reason: 'complaint', expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    await expire(await suppress(expired, { reason: 'manual', expires_at: new Date(Date.now() + 3_600_000).toISOString() }));

    const r = await env.stack.call('POST', '/api/v1/emails/send', {
      token: env.keys.sender, headers: { 'Idempotency-Key': crypto.randomUUID() },
      body: { from: 'news@acme.test', to: [bounced, unsubscribed, expiring, expired], subject: 'Hi', text: 'Hi' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const expected = [
      [bounced, 'suppressed', 'recipient is suppressed (hard_bounce)'],
      [unsubscribed, 'suppressed', 'recipient is suppressed (unsubscribe)'],
      [expiring, 'suppressed', 'recipient is suppressed (complaint)'],
      [expired, 'queued', null],
    ];
    expect(r.body.emails.map((e: any) => [e.recipient, e.status, e.error_message])).toEqual(expected);
    // The log says what the answer said.
    const { rows } = await env.stack.sql.query('SELECT recipient, status::text, error_message FROM emails WHERE message_id = $1', [r.body.message_id]);
    const byRecipient = new Map(rows.map((row) => [row.recipient, [row.recipient, row.status, row.error_message]]));
    expect(expected.map(([recipient]) => byRecipient.get(recipient))).toEqual(expected);
    const log = await env.stack.call('GET', `/api/v1/emails/${r.body.emails[0].id}`, { token: env.keys.sender });
    expect(log.body.email.error_message).toBe('recipient is suppressed (hard_bounce)');

    // Once `expiring` expires too, the next send reaches it.
    await env.stack.sql.query("UPDATE suppressions SET expires_at = now() - interval '1 second' WHERE address = $1", [expiring]);
    const later = await env.stack.call('POST', '/api/v1/emails/send', {
      token: env.keys.sender, body: { from: 'news@acme.test', to: [expiring, bounced], subject: 'Hi', text: 'Hi' },
    });
    expect(later.body.emails.map((e: any) => [e.status, e.error_message])).toEqual([['queued', null], ['suppressed', 'recipient is suppressed (hard_bounce)']]);
  });
});

describe('inbound mail', () => {
  const RAW = 'From: someone\r\nSubject: Hello\r\n\r\nHi\r\n';
  const statusOf = async (spoolId: string) =>
    (await env.stack.sql.query('SELECT status::text, status_reason FROM inbound_emails WHERE spool_id = $1', [spoolId])).rows;

  test('from a suppressed sender is rejected; from one whose entry expired it is received', async () => {
    const [live, gone] = [`${local()}@example.org`, `${local()}@example.org`];
    await suppress(live, { expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    await expire(await suppress(gone, { expires_at: new Date(Date.now() + 3_600_000).toISOString() }));
    for (const [sender, expected] of [[live, ['rejected', 'sender suppressed']], [gone, ['received', null]]] as const) {
      const meta = inboundMeta(['support@acme.test'], { mail_from: sender });
      const r = await forward(env.stack, node.token, { meta, raw: RAW });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect((await statusOf(meta.spool_id)).map((row) => [row.status, row.status_reason])).toEqual([expected]);
    }
  });
});
