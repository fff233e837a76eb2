// The console's live event stream (`GET /app/api/events`): real SSE over real
// HTTP from the project's EventStream Durable Object in local workerd, read
// with fetch and parsed by test/support/sse.ts. Events come from the real
// paths: inbound mail forwarded over the relay channel, a send to a simulator
// address settled by a relay node's claim, webhook attempts made by the
// WebhookDispatcher, and the audit middleware.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { enroll, forward, inboundMeta, type EnrolledNode } from './support/relay.js';
import { sessionCookie } from './support/stack.js';
import { openSse, type SseEvent, type SseStream } from './support/sse.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const DOMAIN = 'events-acme.test';
// The simulator's delivered@ at the host of server.public_url (wrangler.toml: https://mail.example.com).
const SIMULATOR = 'delivered@simulator.mail.example.com';

const env = useTenantStack({
  settings: {
    SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000',
    // Sign-out is noticed within this (plus a query): short, so the test waits little.
    SERVICE_CONSOLE_EVENTS_SESSION_CHECK: '500ms',
  },
  keys: { manager: ['webhooks:write', 'inbound:write', 'relay:write'], sender: ['emails:write', 'domains:write'] },
});

let node: EnrolledNode;
let receiver: WebhookReceiver;
let owner: string;
const open: SseStream[] = [];

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  // Created by the API (it makes the DKIM key a send needs), its DNS taken as checked.
  const domain = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.sender, body: { name: DOMAIN } });
  expect(domain.status, JSON.stringify(domain.body)).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now(), ownership_proven_at = now() WHERE id = $1', [domain.body.domain.id]);
  node = await enroll(env.stack, env.keys.manager);
  owner = await sessionCookie(env.stack, env.tenant.user.id);
});
afterEach(() => { for (const s of open.splice(0)) s.close(); });
afterAll(async () => { await receiver?.close(); });

async function follow(cookie: string, opts: { lastEventId?: string; query?: string; headers?: Record<string, string> } = {}) {
  const stream = await openSse(`${env.stack.url}/app/api/events${opts.query ?? ''}`, {
    cookie, ...(opts.lastEventId === undefined ? {} : { 'last-event-id': opts.lastEventId }), ...opts.headers,
  });
  open.push(stream);
  return stream;
}

/** Mail to the project's domain, forwarded as a relay node does; its record id. */
async function mailArrives(subject = `s-${crypto.randomUUID().slice(0, 8)}`): Promise<string> {
  const meta = inboundMeta([`support@${DOMAIN}`]);
  meta.parsed.subject = subject;
  const reply = await forward(env.stack, node.token, { meta, raw: `From: ann@example.org\r\nSubject: ${subject}\r\n\r\nSecret body text\r\n` });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body.inbound_emails[0].id;
}

const payload = (e: SseEvent) => JSON.parse(e.data) as { type: string; at: string; data: any };
const named = (name: string) => (e: SseEvent) => e.event === name;
const ids = (events: SseEvent[]) => events.map((e) => Number(e.id));

describe('a signed-in member', () => {
  test('sees the audit event, inbound mail, its webhook attempt and an email status, in order, with increasing ids and no bodies', async () => {
    const stream = await follow(owner);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);

    const hook = await env.stack.call('POST', '/api/v1/webhooks', { token: env.keys.manager, body: { url: `${receiver.url}/hooks`, events: ['inbound.received'] } });
    expect(hook.status).toBe(201);
    const [audit] = await stream.waitFor(1, named('audit'));
    expect(payload(audit!)).toMatchObject({ type: 'webhook.created', data: { type: 'webhook.created', project_id: env.tenant.project.id, method: 'POST', path: '/api/v1/webhooks', status: 201 } });

    const inboundId = await mailArrives();
    const [inbound] = await stream.waitFor(1, named('inbound.received'));
    const received = payload(inbound!);
    expect(received).toMatchObject({ type: 'inbound.received', data: { id: inboundId, project_id: env.tenant.project.id } });
    // Metadata only, as the webhook envelope: the message's text never reaches the stream.
    expect(inbound!.data).not.toContain('Secret body text');
    expect(received.data).not.toHaveProperty('text_body');
    const [attempt] = await stream.waitFor(1, named('webhook.delivery'));
    expect(payload(attempt!).data).toMatchObject({ webhook_id: hook.body.webhook.id, event: 'inbound.received', attempt: 1, status: 'succeeded', status_code: 200 });

    // A send to the simulator's delivered@ address, settled by a relay node's claim: `email.sent` as `email.status`.
    const sent = await env.stack.call('POST', '/api/v1/emails/send', {
      token: env.keys.sender, body: { from: `news@${DOMAIN}`, to: [SIMULATOR], subject: 'Simulated', text: 'Hello.' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const claim = await env.stack.call('POST', '/relay/v1/outbound/claim', { token: node.token, body: { max: 10 } });
    expect(claim.status).toBe(200);
    expect(claim.body.jobs).toEqual([]);
    const [status] = await stream.waitFor(1, named('email.status'));
    expect(payload(status!)).toMatchObject({ type: 'email.sent', data: { id: sent.body.emails[0].id, status: 'sent', recipients: [SIMULATOR] } });

    // Every event has an id, counting up in the order they were shown.
    const seen = stream.events;
    expect(seen.every((e) => e.id !== null)).toBe(true);
    expect(ids(seen)).toEqual([...ids(seen)].sort((a, b) => a - b));
    expect(new Set(ids(seen)).size).toBe(seen.length);
    const order = (e: SseEvent | undefined) => seen.indexOf(e!);
    expect(order(audit)).toBeLessThan(order(inbound));
    expect(order(inbound)).toBeLessThan(order(attempt));
    expect(order(attempt)).toBeLessThan(order(status));
    await env.stack.sql.query('DELETE FROM webhooks');
  });

  test('reconnecting with Last-Event-ID gets exactly the events missed, header or query parameter', async () => {
    const first = await follow(owner);
    await mailArrives();
    const [seen] = await first.waitFor(1, named('inbound.received'));
    first.close();
    const last = Number(seen!.id);

    // While no stream is open, two more messages arrive.
    const missed = [await mailArrives(), await mailArrives()];
    const resumed = await follow(owner, { lastEventId: String(last) });
    const got = await resumed.waitFor(2, named('inbound.received'));
    expect(got.map((e) => payload(e).data.id)).toEqual(missed);
    // Exactly what followed `last`: no repeat of it, no gap (an owner sees every kind, so ids are consecutive).
    expect(ids(resumed.events)).toEqual(resumed.events.map((_, i) => last + 1 + i));

    // The same from the query parameter, for clients that cannot set the header.
    const byQuery = await follow(owner, { query: `?last_event_id=${last}` });
    await byQuery.waitFor(resumed.events.length);
    expect(byQuery.events.slice(0, resumed.events.length)).toEqual(resumed.events);

    // A new event after the replay goes on from there.
    const next = await mailArrives();
    const [live] = await resumed.waitFor(1, (e) => e.event === 'inbound.received' && payload(e).data.id === next);
    expect(Number(live!.id)).toBeGreaterThan(Math.max(...ids(got)));
  });

  test('a session\'s eleventh stream replaces its oldest (a tab reloaded many times is never refused)', async () => {
    const cookie = await sessionCookie(env.stack, env.tenant.user.id);
    const tabs: SseStream[] = [];
    for (let i = 0; i < 11; i++) tabs.push(await follow(cookie));
    expect(tabs.map((t) => t.status)).toEqual(Array(11).fill(200));
    await tabs[0]!.ended;
    expect(tabs[0]!.events.at(-1)?.event).toBe('end');
    expect(JSON.parse(tabs[0]!.events.at(-1)!.data).reason).toMatch(/replaced by a newer stream/);
    expect(tabs.slice(1).some((t) => t.events.some(named('end')))).toBe(false);
  });

  test('a resume from an id the stream no longer has gets one reset event; a malformed id is refused', async () => {
    const stream = await follow(owner, { lastEventId: '999999999' });
    const [reset] = await stream.waitFor(1, named('reset'));
    expect(JSON.parse(reset!.data)).toMatchObject({ reason: expect.stringContaining('no longer kept') });
    // Its id is the current position, so EventSource resumes from there next time.
    expect(Number(reset!.id)).toBe(JSON.parse(reset!.data).last_event_id);
    expect(Number(reset!.id)).toBeLessThan(999999999);

    const bad = await follow(owner, { lastEventId: 'yesterday' });
    expect(bad.status).toBe(400);
    expect(JSON.parse((bad as { body?: string }).body!).error).toMatch(/Last-Event-ID/);
  });

  test('a session signed out mid-stream, or by sign-out-all, gets an end event and the stream closes', async () => {
    const single = await sessionCookie(env.stack, env.tenant.user.id);
    const everywhere = await sessionCookie(env.stack, env.tenant.user.id);
    const a = await follow(single);
    const b = await follow(everywhere);
    const kept = await follow(owner);
    expect([a.status, b.status, kept.status]).toEqual([200, 200, 200]);

    // Signing out (DELETE /app/api/session) ends that session's stream only.
    const signOut = await env.stack.call('DELETE', '/app/api/session', { headers: { cookie: single, origin: env.stack.url } });
    expect(signOut.status).toBeLessThan(300);
    await a.ended;
    expect(a.events.at(-1)).toMatchObject({ event: 'end' });
    expect(JSON.parse(a.events.at(-1)!.data).reason).toMatch(/session ended/);
    expect(b.events.some(named('end')) || kept.events.some(named('end'))).toBe(false);

    // Signing out everywhere voids every session of the user: the owner's other two streams end.
    const everywhereOut = await env.stack.call('POST', '/app/api/session/sign-out-all', { headers: { cookie: everywhere, origin: env.stack.url } });
    expect(everywhereOut.status).toBeLessThan(300);
    await Promise.all([b.ended, kept.ended]);
    expect(b.events.at(-1)?.event).toBe('end');
    expect(kept.events.at(-1)?.event).toBe('end');
    // Reconnecting with the voided session is refused.
    const again = await follow(everywhere);
    expect(again.status).toBe(401);
    owner = await sessionCookie(env.stack, env.tenant.user.id);
  });
});

describe('isolation and credentials', () => {
  test('a member of one project never sees another project\'s events; a plain member sees no audit events', async () => {
    const other = await sessionCookie(env.stack, env.other.user.id);
    const member = await env.stack.sql.query(`INSERT INTO users (email) VALUES ($1) RETURNING id`, [`member-${crypto.randomUUID().slice(0, 8)}@example.com`]);
    const memberId = member.rows[0].id as string;
    await env.stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'member')`, [env.tenant.project.id, memberId]);
    await env.stack.sql.query('UPDATE users SET default_project_id = $1 WHERE id = $2', [env.tenant.project.id, memberId]);
    const plain = await sessionCookie(env.stack, memberId);

    const acme = await follow(owner);
    const globex = await follow(other);
    const acmeMember = await follow(plain);
    // acme's owner naming globex is refused: not a member there.
    const trespass = await follow(owner, { headers: { 'x-service-project-id': env.other.project.id } });
    expect(trespass.status).toBe(403);

    const hook = await env.stack.call('POST', '/api/v1/webhooks', { token: env.keys.manager, body: { url: `${receiver.url}/hooks`, events: ['inbound.received'] } });
    expect(hook.status).toBe(201);
    const id = await mailArrives();
    await acme.waitFor(1, named('webhook.delivery'));
    await acmeMember.waitFor(1, (e) => e.event === 'inbound.received' && payload(e).data.id === id);

    // globex's stream is live: globex's own event reaches it, and acme's streams do not get it.
    const globexHook = await env.stack.call('POST', '/api/v1/webhooks', {
      token: env.admin, headers: { 'X-Service-Project-Id': env.other.project.id }, body: { url: `${receiver.url}/globex`, events: ['inbound.received'] },
    });
    expect(globexHook.status).toBe(201);
    const [globexAudit] = await globex.waitFor(1, named('audit'));
    expect(payload(globexAudit!).data.project_id).toBe(env.other.project.id);

    expect(globex.events.every((e) => e.data.includes(env.other.project.id) && !e.data.includes(env.tenant.project.id))).toBe(true);
    expect(globex.events.map((e) => e.event)).toEqual(['audit']);
    expect(acme.events.some((e) => e.data.includes(env.other.project.id))).toBe(false);
    // A member reads mail and webhooks but not the audit log (`GET /api/v1/audit-log` needs admin).
    expect(acme.events.some(named('audit'))).toBe(true);
    expect(acmeMember.events.some(named('audit'))).toBe(false);
    await env.stack.sql.query('DELETE FROM webhooks');
  });

  test('an admin demoted to member mid-stream gets no audit event after the next session check; other kinds go on', async () => {
    const admin = await env.stack.sql.query(`INSERT INTO users (email) VALUES ($1) RETURNING id`, [`admin-${crypto.randomUUID().slice(0, 8)}@example.com`]);
    const adminId = admin.rows[0].id as string;
    await env.stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'admin')`, [env.tenant.project.id, adminId]);
    await env.stack.sql.query('UPDATE users SET default_project_id = $1 WHERE id = $2', [env.tenant.project.id, adminId]);
    const demoted = await follow(await sessionCookie(env.stack, adminId));
    const watcher = await follow(owner);
    const hook = (path: string) => env.stack.call('POST', '/api/v1/webhooks', { token: env.keys.manager, body: { url: `${receiver.url}/${path}`, events: ['inbound.received'] } });

    // As an admin, the audit events reach the stream.
    expect((await hook('before')).status).toBe(201);
    await demoted.waitFor(1, named('audit'));

    // Demoted to member; the next check (500 ms here) narrows the stream.
    await env.stack.sql.query(`UPDATE memberships SET role = 'member' WHERE project_id = $1 AND user_id = $2`, [env.tenant.project.id, adminId]);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const auditsBefore = demoted.events.filter(named('audit')).length;
    expect((await hook('after')).status).toBe(201);
    // The owner's stream gets the new audit event: it was broadcast to every stream at that moment.
    await watcher.waitFor(2, named('audit'));
    // The demoted member's stream is still open and still gets what a member may see...
    const id = await mailArrives();
    await demoted.waitFor(1, (e) => e.event === 'inbound.received' && payload(e).data.id === id);
    // ...but not the audit event written after the demotion.
    expect(demoted.events.filter(named('audit')).length).toBe(auditsBefore);
    expect(demoted.events.some(named('end'))).toBe(false);
    await env.stack.sql.query('DELETE FROM webhooks');
  });

  test('a member whose group loses every permission the stream serves gets an end event', async () => {
    const group = await env.stack.sql.query(`INSERT INTO member_groups (project_id, name, permissions) VALUES ($1, $2, '{inbound:read}') RETURNING id`, [env.tenant.project.id, `readers-${crypto.randomUUID().slice(0, 8)}`]);
    const user = await env.stack.sql.query(`INSERT INTO users (email) VALUES ($1) RETURNING id`, [`reader-${crypto.randomUUID().slice(0, 8)}@example.com`]);
    const userId = user.rows[0].id as string;
    await env.stack.sql.query(`INSERT INTO memberships (project_id, user_id, role, group_id) VALUES ($1, $2, 'member', $3)`, [env.tenant.project.id, userId, group.rows[0].id]);
    await env.stack.sql.query('UPDATE users SET default_project_id = $1 WHERE id = $2', [env.tenant.project.id, userId]);
    const stream = await follow(await sessionCookie(env.stack, userId));
    expect(stream.status).toBe(200);
    const id = await mailArrives();
    await stream.waitFor(1, (e) => e.event === 'inbound.received' && payload(e).data.id === id);

    await env.stack.sql.query(`UPDATE member_groups SET permissions = '{domains:read}' WHERE id = $1`, [group.rows[0].id]);
    await stream.ended;
    expect(stream.events.at(-1)?.event).toBe('end');
    expect(JSON.parse(stream.events.at(-1)!.data).reason).toMatch(/no longer lets you see any of its events/);
  });

  test('the stream follows the session\'s current project (PUT /app/api/session/project), else the user\'s default', async () => {
    await env.stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'admin')`, [env.other.project.id, env.tenant.user.id]);
    const switched = await sessionCookie(env.stack, env.tenant.user.id);
    const put = await env.stack.call('PUT', '/app/api/session/project', { headers: { cookie: switched, origin: env.stack.url }, body: { project_id: env.other.project.id } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const inGlobex = await follow(switched);
    const inAcme = await follow(owner);

    const hook = (project: string, path: string) => env.stack.call('POST', '/api/v1/webhooks', {
      token: env.admin, headers: { 'X-Service-Project-Id': project }, body: { url: `${receiver.url}/${path}`, events: ['inbound.received'] },
    });
    expect((await hook(env.other.project.id, 'globex-2')).status).toBe(201);
    expect((await hook(env.tenant.project.id, 'acme-2')).status).toBe(201);
    const [globexEvent] = await inGlobex.waitFor(1, named('audit'));
    const [acmeEvent] = await inAcme.waitFor(1, named('audit'));
    expect(payload(globexEvent!).data.project_id).toBe(env.other.project.id);
    expect(payload(acmeEvent!).data.project_id).toBe(env.tenant.project.id);
    expect(inGlobex.events.some((e) => e.data.includes(env.tenant.project.id))).toBe(false);
    await env.stack.sql.query('DELETE FROM webhooks');
    await env.stack.sql.query('DELETE FROM memberships WHERE project_id = $1 AND user_id = $2', [env.other.project.id, env.tenant.user.id]);
  });

  test('an API key or platform credential is refused, with or without a session cookie; no credential is 401', async () => {
    const key = await env.stack.call('GET', '/app/api/events', { token: env.keys.manager });
    expect(key.status).toBe(403);
    expect(key.body.error).toMatch(/not accepted on \/app\/api/);
    const withCookie = await env.stack.call('GET', '/app/api/events', { token: env.keys.manager, headers: { cookie: owner } });
    expect(withCookie.status).toBe(403);
    const platform = await env.stack.call('GET', '/app/api/events', { token: env.admin, headers: { 'X-Service-Project-Id': env.tenant.project.id } });
    expect(platform.status).toBe(403);
    const none = await env.stack.call('GET', '/app/api/events');
    expect(none.status).toBe(401);
  });
});

describe('an event whose stream hand-over failed every try', () => {
  const runSweep = async () => env.stack.runCron('* * * * *');
  const streamedAt = async (id: number | string) =>
    (await env.stack.sql.query('SELECT streamed_at FROM outbox WHERE id = $1', [id])).rows[0]?.streamed_at as Date | null;

  test('a hand-over that succeeds marks the row streamed, with or without an open stream', async () => {
    const watched = await follow(owner);
    const id = await mailArrives();
    await watched.waitFor(1, (e) => e.event === 'inbound.received' && payload(e).data.id === id);
    const row = async (inboundId: string) =>
      (await env.stack.sql.query(`SELECT id FROM outbox WHERE event = 'inbound.received' AND data->>'id' = $1`, [inboundId])).rows[0].id as string;
    expect(await eventually(async () => streamedAt(await row(id)), (at) => at !== null)).not.toBeNull();
    watched.close();
    // Nobody watching: the stream keeps nothing, and the row is still marked (the sweep has nothing to redo).
    const unwatched = await mailArrives();
    expect(await eventually(async () => streamedAt(await row(unwatched)), (at) => at !== null)).not.toBeNull();
  });

  test('reaches an open stream at the next cron sweep, once', async () => {
    const stream = await follow(owner);
    // As a request leaves it when its webhook hand-over succeeded and every try of its stream hand-over
    // failed: committed, handed over, never streamed (`streamed_at` null), past the sweep's one-minute grace.
    const sender = `missed-${crypto.randomUUID().slice(0, 8)}@example.org`;
    const { rows: [row] } = await env.stack.sql.query(
      `INSERT INTO outbox (project_id, event, data, created_at, handed_over_at)
       VALUES ($1, 'inbound.received', $2, now() - interval '2 minutes', now() - interval '2 minutes') RETURNING id`,
      [env.tenant.project.id, JSON.stringify({ id: crypto.randomUUID(), sender })],
    );
    // And one within the grace: the request that wrote it may still be handing it over.
    const young = `young-${crypto.randomUUID().slice(0, 8)}@example.org`;
    await env.stack.sql.query(
      `INSERT INTO outbox (project_id, event, data, handed_over_at) VALUES ($1, 'inbound.received', $2, now())`,
      [env.tenant.project.id, JSON.stringify({ id: crypto.randomUUID(), sender: young })],
    );

    expect(await runSweep()).toBe(200);
    const [missed] = await stream.waitFor(1, (e) => e.event === 'inbound.received' && payload(e).data.sender === sender);
    expect(payload(missed!)).toMatchObject({ type: 'inbound.received', data: { sender } });
    expect(await eventually(() => streamedAt(row.id), (at) => at !== null)).not.toBeNull();

    // Swept again: shown once, and the young row is still left to its request.
    expect(await runSweep()).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(stream.events.filter((e) => e.data.includes(sender))).toHaveLength(1);
    expect(stream.events.some((e) => e.data.includes(young))).toBe(false);
  });
});
