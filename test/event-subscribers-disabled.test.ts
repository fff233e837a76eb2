// A disabled webhook is no subscriber (docs/webhooks.md "Automatic disable"):
// an event written while every webhook taking its type is disabled is born
// handed over, as the fan-out would hand it over with no delivery. Checked for
// the two writers that decide it in their own statement: the complaint
// threshold (sender health) and a one-click unsubscribe. A row born handed
// over has `handed_over_at` equal to `created_at` (one transaction's now());
// one left for the dispatcher is handed over later, if at all.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { httpsToken } from '../edge/src/services/unsubscribe/token.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';

let stack: TestStack;
let projectId: string;
let sender: string;
let manager: string;
let webhookId: string;

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'acme');
  projectId = tenant.project.id;
  sender = (await tenant.key(['emails:write', 'emails:read', 'suppressions:read'])).token;
  manager = (await tenant.key(['domains:write', 'webhooks:write', 'webhooks:read'])).token;
  const domain = await stack.call('POST', '/api/v1/domains', { token: manager, body: { name: 'acme.test' } });
  expect(domain.status, JSON.stringify(domain.body)).toBe(201);
  const verification = { dkim: { ok: true }, spf: { ok: true }, dmarc: { ok: true, found: ['v=DMARC1; p=none'] } };
  await stack.sql.query('UPDATE domains SET verified_at = now(), verification = $2 WHERE id = $1', [domain.body.domain.id, JSON.stringify(verification)]);
  const webhook = await stack.call('POST', '/api/v1/webhooks', {
    token: manager, body: { url: 'http://127.0.0.1:9/hook', events: ['email.unsubscribed', 'project.complaint_threshold_crossed'] },
  });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);
  webhookId = webhook.body.webhook.id;
  // Disabled as the automatic disable leaves it (services/webhooks/disable.ts).
  await stack.sql.query("UPDATE webhooks SET disabled_at = now(), disabled_reason = 'every delivery attempt failed' WHERE id = $1", [webhookId]);
  expect((await stack.call('GET', '/api/v1/webhooks', { token: manager })).body.webhooks[0].status).toBe('disabled');
});

afterAll(async () => {
  await stack?.stop();
});

const outboxOf = async (event: string) => (await stack.sql.query(
  'SELECT handed_over_at = created_at AS born_handed_over, handed_over_at FROM outbox WHERE project_id = $1 AND event = $2', [projectId, event])).rows;

describe('a disabled webhook is no subscriber', () => {
  test('the complaint threshold crossed while the only webhook taking it is disabled: the event is born handed over, no delivery', async () => {
    const today = new Date().toISOString().slice(0, 10);
    await stack.sql.query(
      `INSERT INTO email_daily_counts (project_id, day, from_domain, tag, status, stream, count)
       VALUES ($1, $2, 'acme.test', '', 'sent', 'broadcast', 99), ($1, $2, 'acme.test', '', 'complained', 'broadcast', 1)`, [projectId, today]);
    // Reading usage evaluates the project's threshold (1% > 0.3%).
    const usage = await stack.call('GET', '/api/v1/usage', { token: sender });
    expect(usage.status).toBe(200);
    expect(usage.body.usage.notices).toEqual([expect.objectContaining({ code: 'complaint_rate_over_threshold' })]);
    expect(await outboxOf('project.complaint_threshold_crossed')).toEqual([expect.objectContaining({ born_handed_over: true })]);
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1', [webhookId])).rows[0].n).toBe(0);
  });

  test('a one-click unsubscribe while the only webhook taking email.unsubscribed is disabled: the event is born handed over, no delivery', async () => {
    const sent = await stack.call('POST', '/api/v1/emails/send', {
      token: sender, body: { from: 'news@acme.test', to: 'ann@dest.test', subject: 'Hello', text: 'Hello.', list_unsubscribe: true },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const email = sent.body.emails[0];
    const token = await httpsToken({ 'database.crypto.encryption_key': stack.encryptionKey },
      { projectId, stream: 'transactional', address: 'ann@dest.test', emailId: email.id }, Math.floor(Date.now() / 1000));
    const r = await fetch(`${stack.url}/unsubscribe/${token}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: 'List-Unsubscribe=One-Click',
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ unsubscribed: true, stream: 'transactional' });
    expect(await outboxOf('email.unsubscribed')).toEqual([expect.objectContaining({ born_handed_over: true })]);
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1', [webhookId])).rows[0].n).toBe(0);
  });
});
