// Automatic disable (docs/webhooks.md, "Automatic disable"): a webhook whose
// every attempt has failed for `webhook.disable_after` and at least
// `webhook.disable_after_failures` times is disabled; the project's other
// webhooks get `webhook.disabled`, the audit log an event, the owners a mail
// through the service's own sending path; nothing more is enqueued for it
// until `POST /api/v1/webhooks/{id}/enable`, which resets the span. The clock:
// the span's start is moved back in the database, as other tests move time.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { enroll, forward, inboundMeta, registerDomain } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const DOMAIN = 'disable-acme.test';
const FAILURES = 3;
const env = useTenantStack({
  settings: {
    SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    SERVICE_WEBHOOK_RETRY_DELAY: '200ms',
    SERVICE_WEBHOOK_TIMEOUT: '1s',
    // One attempt per event: each event is one failure of the span.
    SERVICE_WEBHOOK_MAX_ATTEMPTS: '1',
    SERVICE_WEBHOOK_DISABLE_AFTER_FAILURES: String(FAILURES),
  },
  keys: { hooks: ['webhooks:read', 'webhooks:write', 'webhooks:delete', 'inbound:write', 'inbound:read', 'relay:write'] },
});
let failing: WebhookReceiver;
let healthy: WebhookReceiver;
let node: { token: string };
const OWNER = 'owner@disable-owners.test';
const MEMBER = 'member@disable-owners.test';

beforeAll(async () => {
  [failing, healthy] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
  failing.setFallback({ status: 503, body: 'down' });
  await registerDomain(env.stack, env.tenant.project.id, DOMAIN);
  node = await enroll(env.stack, env.keys.hooks);
  // An owner (mailed) and a plain member (not mailed) of the project.
  for (const [email, role] of [[OWNER, 'owner'], [MEMBER, 'member']] as const) {
    const { rows: [user] } = await env.stack.sql.query('INSERT INTO users (email, name) VALUES ($1, $1) RETURNING id', [email]);
    await env.stack.sql.query('INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, $3)', [env.tenant.project.id, user.id, role]);
  }
});
afterAll(async () => { await Promise.all([failing?.close(), healthy?.close()]); });
afterEach(async () => {
  await env.stack.sql.query('DELETE FROM webhooks');
  failing.clear();
  healthy.clear();
});

async function createWebhook(body: Record<string, unknown>) {
  const reply = await env.stack.call('POST', '/api/v1/webhooks', { token: env.keys.hooks, body });
  if (reply.status !== 201) throw new Error(`webhook creation failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.webhook as { id: string; url: string };
}

async function mailArrives(sender = 'ann@example.com'): Promise<string> {
  const meta = inboundMeta([`support@${DOMAIN}`], { mail_from: sender });
  const reply = await forward(env.stack, node.token, { meta, raw: `From: ${sender}\r\nSubject: s\r\n\r\nHello\r\n` });
  expect(reply.status).toBe(200);
  return reply.body.inbound_emails[0].id;
}

const webhook = async (id: string) => {
  const reply = await env.stack.call('GET', '/api/v1/webhooks', { token: env.keys.hooks });
  return (reply.body.webhooks as any[]).find((w) => w.id === id);
};
const deliveries = async (id: string) =>
  (await env.stack.call('GET', `/api/v1/webhooks/${id}/deliveries`, { token: env.keys.hooks })).body.deliveries as any[];
const quietFor = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The span as if its first failure were 5 days and a minute ago, one failure short of the count. */
const ageSpan = (id: string, failures = FAILURES - 1) => env.stack.sql.query(
  `UPDATE webhooks SET failing_since = now() - interval '5 days 1 minute', consecutive_failures = $2 WHERE id = $1`, [id, failures]);

describe('the failure span', () => {
  test('each failed attempt lengthens it; a success ends it', async () => {
    const hook = await createWebhook({ url: failing.url, events: ['inbound.received'] });
    const before = Date.now();
    await mailArrives();
    const span = await eventually(() => webhook(hook.id), (w) => w.consecutive_failures === 1);
    expect(span).toMatchObject({ status: 'enabled', disabled_at: null, ordered: false });
    expect(new Date(span.failing_since).getTime()).toBeGreaterThanOrEqual(before - 1000);

    // Old enough but one short of the count: not disabled. Then a success resets it.
    await ageSpan(hook.id, FAILURES - 2);
    failing.answer({ status: 200 });
    await mailArrives();
    const reset = await eventually(() => webhook(hook.id), (w) => w.consecutive_failures === 0);
    expect(reset).toMatchObject({ status: 'enabled', failing_since: null });
  });

  test('failing for webhook.disable_after and webhook.disable_after_failures times disables it, tells the others, the audit log and the owners', async () => {
    const hook = await createWebhook({ url: `${failing.url}/dying`, events: ['inbound.received'] });
    const watcher = await createWebhook({ url: `${healthy.url}/watcher`, events: ['webhook.disabled'] });
    const everything = await createWebhook({ url: `${healthy.url}/all`, events: ['*'] });
    const inboundOnly = await createWebhook({ url: `${healthy.url}/inbound`, events: ['inbound.received'] });
    await ageSpan(hook.id);
    await mailArrives();

    const disabled = await eventually(() => webhook(hook.id), (w) => w.status === 'disabled');
    expect(disabled.consecutive_failures).toBe(FAILURES);
    expect(disabled.disabled_reason).toMatch(new RegExp(`^every delivery attempt failed since \\S+ \\(${FAILURES} attempts\\)$`));
    expect(new Date(disabled.disabled_at).getTime()).toBeGreaterThan(Date.now() - 30_000);

    // webhook.disabled to the project's other webhooks subscribed to it (or to *), signed like any event.
    const events = await eventually(async () => healthy.received().filter((r) => r.body.event === 'webhook.disabled'), (r) => r.length === 2);
    expect(events.map((r) => r.path).sort()).toEqual(['/all', '/watcher']);
    expect(events[0]!.body.data).toEqual({
      project_id: env.tenant.project.id, webhook_id: hook.id, url: `${failing.url}/dying`,
      disabled_at: disabled.disabled_at, reason: disabled.disabled_reason,
      failing_since: disabled.failing_since, consecutive_failures: FAILURES,
    });
    expect(events[0]!.headers['x-service-event']).toBe('webhook.disabled');
    await quietFor(300);
    expect(healthy.received().filter((r) => r.path === '/inbound' && r.body.event === 'webhook.disabled')).toHaveLength(0);
    expect((await deliveries(watcher.id)).map((d) => d.event)).toEqual(['webhook.disabled']);
    expect((await deliveries(everything.id)).map((d) => d.event).sort()).toEqual(['inbound.received', 'webhook.disabled']);
    expect((await deliveries(inboundOnly.id)).map((d) => d.event)).toEqual(['inbound.received']);

    // The audit log, with no actor.
    const { rows: audit } = await env.stack.sql.query(`SELECT * FROM audit_events WHERE type = 'webhook.disabled' AND project_id = $1`, [env.tenant.project.id]);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ category: 'project', actor_id: null });
    expect(audit[0].detail).toBe(`webhook ${hook.id} (${failing.url}/dying) disabled: ${disabled.disabled_reason}`);

    // A mail to each owner through the system-mail path, none to other members.
    const { rows: mails } = await env.stack.sql.query(
      `SELECT e.recipient, e.project_id, m.subject, m.text FROM emails e JOIN outbound_messages m ON m.id = e.message_id
       WHERE m.origin = 'system' AND m.subject LIKE 'Webhook disabled%'`);
    const { rows: owners } = await env.stack.sql.query(
      `SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.project_id = $1 AND m.role = 'owner'`, [env.tenant.project.id]);
    expect(owners.map((o) => o.email)).toContain(OWNER);
    expect(mails.map((m) => m.recipient).sort()).toEqual(owners.map((o) => o.email).sort());
    expect(mails.map((m) => m.recipient)).not.toContain(MEMBER);
    expect(mails[0]).toMatchObject({ project_id: '00000000-0000-4000-8000-00000000e0a1', subject: `Webhook disabled in acme: ${failing.url}/dying` });
    expect(mails[0].text).toContain(`POST /api/v1/webhooks/${hook.id}/enable`);
    expect(mails[0].text).toContain(disabled.disabled_reason);

    // Disabled: new events are not enqueued for it, and it gets no request.
    failing.clear();
    await mailArrives();
    await eventually(async () => healthy.received().filter((r) => r.path === '/inbound').length, (n) => n === 2);
    await quietFor(500);
    expect(failing.received()).toHaveLength(0);
    expect((await deliveries(hook.id)).map((d) => d.status)).toEqual(['failed']);

    // Enabled again by API: the span starts afresh and events flow.
    const enabled = await env.stack.call('POST', `/api/v1/webhooks/${hook.id}/enable`, { token: env.keys.hooks });
    expect(enabled.status).toBe(200);
    expect(enabled.body.webhook).toMatchObject({ id: hook.id, status: 'enabled', disabled_at: null, disabled_reason: null, failing_since: null, consecutive_failures: 0 });
    failing.answer({ status: 200 });
    await mailArrives();
    await eventually(async () => failing.received(), (r) => r.length === 1);
    await eventually(() => deliveries(hook.id), (d) => d[0]?.status === 'succeeded');
    const { rows: enableAudit } = await eventually(
      () => env.stack.sql.query(`SELECT actor_email FROM audit_events WHERE type = 'webhook.enable' AND project_id = $1`, [env.tenant.project.id]),
      (r) => r.rows.length === 1);
    expect(enableAudit[0].actor_email).toMatch(/^api key /);
  });
});

describe('the enable route', () => {
  test('another project\'s webhook is 404, a malformed id 400, and nothing changes', async () => {
    const otherKey = await env.other.key(['webhooks:write']);
    const hook = await createWebhook({ url: failing.url, events: ['inbound.received'] });
    await env.stack.sql.query(`UPDATE webhooks SET disabled_at = now(), disabled_reason = 'test' WHERE id = $1`, [hook.id]);
    const foreign = await env.stack.call('POST', `/api/v1/webhooks/${hook.id}/enable`, { token: otherKey.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'webhook not found' });
    const malformed = await env.stack.call('POST', '/api/v1/webhooks/not-a-uuid/enable', { token: env.keys.hooks });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatch(/id/);
    expect((await webhook(hook.id)).status).toBe('disabled');
  });
});
