// The outbound relay routes (docs/sending.md, "Relay protocol: outbound"),
// driven over HTTP as a relay node would: claims and their jobs, leases and
// their expiry, stale results, the node's scope, backoff, expiry, hard
// bounces and the outbox events, against the real edge and database.
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { seal } from '../edge/src/crypto/seal.js';
import { enroll, makeInstallationWide, type EnrolledNode } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';

const RETRY_DELAY_MS = 60_000;
const LEASE_MS = 300_000;

const env = useTenantStack({
  settings: { SERVICE_OUTBOUND_RETRY_DELAY: '60s', SERVICE_OUTBOUND_LEASE: '300s', SERVICE_OUTBOUND_MAX_AGE: '48h' },
  keys: {
    sender: ['emails:write', 'emails:read', 'suppressions:read'],
    admin: ['domains:write', 'relay:write', 'relay:read'],
  },
});

let node: EnrolledNode;
let second: EnrolledNode;
let otherNode: EnrolledNode;
let domainId: string;
let dkimRecord: string;

beforeAll(async () => {
  const created = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.admin, body: { name: 'acme.test' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  domainId = created.body.domain.id;
  dkimRecord = created.body.domain.dns_records.find((r: { purpose: string }) => r.purpose === 'dkim').value;
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domainId]);
  node = await enroll(env.stack, env.keys.admin, 'mx-a');
  second = await enroll(env.stack, env.keys.admin, 'mx-b');
  otherNode = await enroll(env.stack, (await env.other.key(['relay:write'])).token, 'mx-globex');
});

// Each test sees only its own mail: whatever an earlier test left due is parked far in the future.
afterEach(async () => {
  await env.stack.sql.query(`UPDATE emails SET next_attempt_at = now() + interval '100 years', lease_node_id = NULL WHERE status IN ('queued', 'sending')`);
});

const send = async (extra: Record<string, unknown> = {}, token = env.keys.sender) => {
  const r = await env.stack.call('POST', '/api/v1/emails/send', {
    token, body: { from: 'Acme <news@acme.test>', to: ['ann@example.org'], subject: `Hello ${crypto.randomUUID().slice(0, 8)}`, text: 'Hi Ann', ...extra },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { message_id: string; emails: { id: string; recipient: string; status: string }[] };
};

const claim = (who: EnrolledNode, max = 100) => env.stack.call('POST', '/relay/v1/outbound/claim', { token: who.token, body: { max } });
const report = (who: EnrolledNode, results: unknown[]) => env.stack.call('POST', '/relay/v1/outbound/results', { token: who.token, body: { results } });

/** A claim expected to succeed: its jobs. */
async function jobsOf(who: EnrolledNode, max = 100): Promise<any[]> {
  const r = await claim(who, max);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.jobs;
}

const result = (job: { email_id: string; attempt: number }, extra: Record<string, unknown> = {}) => ({
  email_id: job.email_id, attempt: job.attempt, outcome: 'sent', smtp_code: 250, reply: '250 2.0.0 Ok: queued as ABC',
  server: 'mx.example.org:25', started_at: new Date().toISOString(), duration_ms: 120, ...extra,
});

const row = async (id: string) => (await env.stack.sql.query('SELECT * FROM emails WHERE id = $1', [id])).rows[0];
const outboxOf = async (emailId: string) =>
  (await env.stack.sql.query(`SELECT id, event, data, handed_over_at FROM outbox WHERE data->>'id' = $1 ORDER BY id`, [emailId])).rows;
const attemptsOf = async (emailId: string) =>
  (await env.stack.sql.query('SELECT * FROM email_attempts WHERE email_id = $1 ORDER BY attempt', [emailId])).rows;
/** Seconds from the database's now to `at`. */
const secondsFromNow = async (at: Date) =>
  Number((await env.stack.sql.query('SELECT extract(epoch from $1::timestamptz - now()) AS s', [at])).rows[0].s);

describe('POST /relay/v1/outbound/claim', () => {
  test('leases due recipients and answers one job each: message, attachments from R2, the unsealed DKIM key, the MX route', async () => {
    const pdf = Buffer.from('%PDF-1.4 tiny');
    const sent = await send({
      to: ['Ann <ann@example.org>'], cc: ['Bob@Example.NET'], bcc: ['carol@example.com'], reply_to: 'support@acme.test',
      subject: 'Your order', text: 'On its way', html: '<p>On its way</p>', headers: { 'X-Order-Id': 'A-1042' },
      attachments: [{ filename: 'invoice.pdf', content: pdf.toString('base64') }],
    });
    const jobs = await jobsOf(node);
    expect(jobs.map((j) => j.envelope.to).sort()).toEqual(['Bob@example.net', 'ann@example.org', 'carol@example.com']);
    const { rows: [message] } = await env.stack.sql.query('SELECT created_at FROM outbound_messages WHERE id = $1', [sent.message_id]);
    const ann = jobs.find((j) => j.envelope.to === 'ann@example.org');
    expect(ann).toEqual({
      email_id: sent.emails[0]!.id,
      attempt: 1,
      lease_until: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      // Issue 17: MAIL FROM is the VERP return path on MX routes (docs/bounces.md); the test stack's public host is mail.example.com.
      envelope: {
        from: 'news@acme.test', to: 'ann@example.org',
        return_path: expect.stringMatching(new RegExp(`^bounce-${sent.emails[0]!.id.replace(/-/g, '')}-[0-9a-f]{20}@bounces\\.mail\\.example\\.com$`)),
      },
      message: {
        message_id: `<${sent.message_id}@acme.test>`,
        date: (message.created_at as Date).toISOString(),
        from: 'Acme <news@acme.test>',
        to: ['Ann <ann@example.org>'],
        cc: ['Bob@example.net'], // the header form composed from the parsed mailbox: the domain lower case
        reply_to: ['support@acme.test'],
        subject: 'Your order',
        text: 'On its way',
        html: '<p>On its way</p>',
        headers: { 'X-Order-Id': 'A-1042' },
        attachments: [{ filename: 'invoice.pdf', content_type: 'application/pdf', content_base64: pdf.toString('base64') }],
      },
      dkim: { domain: 'acme.test', selector: expect.stringMatching(/^em\d{6}$/), algorithm: 'rsa', private_key_pem: expect.stringContaining('-----BEGIN PRIVATE KEY-----') },
      route: { kind: 'mx', domain: 'example.org' },
    });
    // The key handed out is the one the domain publishes.
    const spki = createPublicKey(createPrivateKey(ann.dkim.private_key_pem)).export({ type: 'spki', format: 'der' }).toString('base64');
    expect(dkimRecord).toContain(`p=${spki}`);
    // The blind copy travels in the envelope only.
    const carol = jobs.find((j) => j.envelope.to === 'carol@example.com');
    expect(carol.message.to).toEqual(['Ann <ann@example.org>']);
    expect(JSON.stringify(carol.message)).not.toContain('carol@');
    expect(jobs.find((j) => j.envelope.to === 'Bob@example.net').route).toEqual({ kind: 'mx', domain: 'example.net' });

    const leased = await row(ann.email_id);
    expect(leased).toMatchObject({ status: 'sending', attempts: 1, lease_node_id: node.id });
    expect(leased.next_attempt_at.toISOString()).toBe(ann.lease_until);
    expect(await secondsFromNow(leased.next_attempt_at)).toBeGreaterThan(LEASE_MS / 1000 - 10);
    expect(await secondsFromNow(leased.next_attempt_at)).toBeLessThanOrEqual(LEASE_MS / 1000);
    // The log says so too.
    const logged = await env.stack.call('GET', `/api/v1/emails/${ann.email_id}`, { token: env.keys.sender });
    expect(logged.body.email).toMatchObject({ status: 'sending', attempts: 1 });

    // Leased: nothing more to claim.
    expect(await jobsOf(second)).toEqual([]);
  });

  test('max bounds the claim, longest due first; the rest stays queued', async () => {
    const first = await send();
    const later = await send({ to: ['a1@example.org', 'a2@example.org', 'a3@example.org'] });
    await env.stack.sql.query(`UPDATE emails SET next_attempt_at = now() - interval '10 minutes' WHERE id = $1`, [first.emails[0]!.id]);
    const jobs = await jobsOf(node, 2);
    expect(jobs).toHaveLength(2);
    expect(jobs.map((j) => j.email_id)).toContain(first.emails[0]!.id);
    const rest = await jobsOf(node, 100);
    expect(rest).toHaveLength(2);
    expect(new Set([...jobs, ...rest].map((j) => j.email_id))).toEqual(new Set([first.emails[0]!.id, ...later.emails.map((e) => e.id)]));
  });

  test('one answer carries about 24 MiB of content at most: the first job always, the rest at the next claim', async () => {
    const sent = await send({ to: ['big1@example.org', 'big2@example.org'], attachments: [{ filename: 'a.bin', content: Buffer.from('small').toString('base64') }] });
    // The estimate reads the stored sizes: 20 MiB of attachment is 26.7 MiB of base64 per job.
    await env.stack.sql.query(`UPDATE outbound_messages SET attachments = jsonb_set(attachments, '{0,size}', '20971520') WHERE id = $1`, [sent.message_id]);
    const first = await jobsOf(node);
    expect(first).toHaveLength(1);
    const rest = await jobsOf(node);
    expect(rest).toHaveLength(1);
    expect(new Set([first[0].email_id, rest[0].email_id])).toEqual(new Set(sent.emails.map((e) => e.id)));
  });

  test('concurrent claims never take one recipient twice', async () => {
    const sent = await send({ to: Array.from({ length: 30 }, (_, i) => `r${i}@example.org`) });
    const claims = await Promise.all([node, second, node, second].map((who) => claim(who, 10)));
    for (const c of claims) expect(c.status).toBe(200);
    const ids = claims.flatMap((c) => c.body.jobs.map((j: { email_id: string }) => j.email_id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeLessThanOrEqual(30);
    const rest = await jobsOf(node);
    expect(new Set([...ids, ...rest.map((j) => j.email_id)])).toEqual(new Set(sent.emails.map((e) => e.id)));
    const { rows } = await env.stack.sql.query('SELECT attempts, status FROM emails WHERE message_id = $1', [sent.message_id]);
    expect(rows.every((r) => r.attempts === 1 && r.status === 'sending')).toBe(true);
  });

  test('never claimed: suppressed, captured (sandbox), not yet due, already sent or failed', async () => {
    await env.stack.sql.query(`INSERT INTO suppressions (project_id, address, reason) VALUES ($1, 'gone@example.org', 'manual') ON CONFLICT DO NOTHING`, [env.tenant.project.id]);
    const suppressed = await send({ to: ['gone@example.org'] });
    expect(suppressed.emails[0]!.status).toBe('suppressed');
    const sandboxKey = (await env.tenant.key(['sandbox:write'], { sandbox: true })).token;
    const captured = await send({}, sandboxKey);
    expect(captured.emails[0]!.status).toBe('captured');
    const future = await send();
    await env.stack.sql.query(`UPDATE emails SET next_attempt_at = now() + interval '1 minute' WHERE id = $1`, [future.emails[0]!.id]);
    const done = await send({ to: ['x1@example.org', 'x2@example.org'] });
    await env.stack.sql.query(`UPDATE emails SET status = CASE WHEN recipient = 'x1@example.org' THEN 'sent'::email_status ELSE 'failed'::email_status END WHERE message_id = $1`, [done.message_id]);
    // Even when due by the clock.
    await env.stack.sql.query(`UPDATE emails SET next_attempt_at = now() - interval '1 minute' WHERE id = ANY($1)`, [[suppressed.emails[0]!.id, captured.emails[0]!.id, ...done.emails.map((e) => e.id)]]);
    expect(await jobsOf(node)).toEqual([]);
  });

  test('a node claims its own project\'s mail only, unless it is installation-wide', async () => {
    const sent = await send();
    expect(await jobsOf(otherNode)).toEqual([]);
    expect((await row(sent.emails[0]!.id)).status).toBe('queued');
    await makeInstallationWide(env.stack, otherNode.id);
    try {
      const jobs = await jobsOf(otherNode);
      expect(jobs.map((j) => j.email_id)).toEqual([sent.emails[0]!.id]);
      expect((await row(sent.emails[0]!.id)).lease_node_id).toBe(otherNode.id);
    } finally {
      await env.stack.sql.query('UPDATE relay_nodes SET installation_wide = false WHERE id = $1', [otherNode.id]);
    }
  });

  test('an expired lease returns the recipient to the claim: the next node gets attempt 2, the first node\'s result is stale', async () => {
    const sent = await send();
    const [first] = await jobsOf(node);
    expect(first.attempt).toBe(1);
    // The first node went silent; its lease runs out.
    await env.stack.sql.query(`UPDATE emails SET next_attempt_at = now() - interval '1 second' WHERE id = $1`, [first.email_id]);
    const [again] = await jobsOf(second);
    expect(again).toMatchObject({ email_id: sent.emails[0]!.id, attempt: 2 });
    expect(await row(first.email_id)).toMatchObject({ status: 'sending', attempts: 2, lease_node_id: second.id });

    const late = await report(node, [result(first)]);
    expect(late.status).toBe(200);
    expect(late.body).toEqual({ accepted: [], stale: [first.email_id] });
    expect(await row(first.email_id)).toMatchObject({ status: 'sending', attempts: 2, lease_node_id: second.id, sent_at: null });
    expect(await attemptsOf(first.email_id)).toEqual([]);
    expect(await outboxOf(first.email_id)).toEqual([]);

    // The same node's own result for attempt 1, had it claimed again, is stale as well.
    expect((await report(second, [result(first)])).body).toEqual({ accepted: [], stale: [first.email_id] });
    expect((await report(second, [result(again)])).body).toEqual({ accepted: [again.email_id], stale: [] });
    expect((await row(again.email_id)).status).toBe('sent');
  });

  test('a domain without a DKIM key: the recipient is failed at the claim, never handed out unsigned', async () => {
    const other = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.admin, body: { name: 'nokey.acme.test', dkim_algorithm: 'ed25519' } });
    expect(other.status).toBe(201);
    await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [other.body.domain.id]);
    const sent = await send({ from: 'news@nokey.acme.test' });
    await env.stack.sql.query('UPDATE domains SET dkim_selector = NULL, dkim_algorithm = NULL, dkim_private_key_sealed = NULL, dkim_public_key = NULL WHERE id = $1', [other.body.domain.id]);
    const signed = await send();

    const jobs = await jobsOf(node);
    expect(jobs.map((j) => j.email_id)).toEqual([signed.emails[0]!.id]);
    const id = sent.emails[0]!.id;
    expect(await row(id)).toMatchObject({
      status: 'failed', attempts: 0, lease_node_id: null, next_attempt_at: null,
      error_message: 'from domain nokey.acme.test has no DKIM key: the message cannot be signed, and is never sent unsigned',
    });
    const [event] = await outboxOf(id);
    expect(event).toMatchObject({ event: 'email.failed' });
    expect(event.data).toEqual({
      id, project_id: env.tenant.project.id, sender: 'news@nokey.acme.test', recipients: ['ann@example.org'], subject: expect.stringMatching(/^Hello /),
      status: 'failed', attempts: 0, error_message: 'from domain nokey.acme.test has no DKIM key: the message cannot be signed, and is never sent unsigned', stream: 'transactional',
    });
    await eventually(() => outboxOf(id), (rows) => rows[0]?.handed_over_at !== null);
  });

  test('an attachment missing from storage fails the recipient, naming it', async () => {
    const sent = await send({ attachments: [{ filename: 'a.txt', content: Buffer.from('hello').toString('base64') }] });
    await env.stack.sql.query(`UPDATE outbound_messages SET attachments = jsonb_set(attachments, '{0,r2_key}', '"outbound/nowhere"') WHERE id = $1`, [sent.message_id]);
    expect(await jobsOf(node)).toEqual([]);
    expect(await row(sent.emails[0]!.id)).toMatchObject({ status: 'failed', error_message: 'attachment 0 (a.txt) is missing from storage' });
  });

  test('route: the project\'s SMTP server, else the shared pool, else MX; passwords unsealed for the job', async () => {
    const key = env.stack.encryptionKey;
    // The shared pool is the operator's: only an installation-wide node is handed its servers.
    const wide = await enroll(env.stack, env.keys.admin, 'mx-wide');
    await makeInstallationWide(env.stack, wide.id);
    /** The wide node's job for the message just sent (it may see other projects' mail too). */
    const jobFor = async (sent: { emails: { id: string }[] }) => (await jobsOf(wide)).filter((j) => j.email_id === sent.emails[0]!.id);
    const pool = await env.stack.sql.query(
      `INSERT INTO smtp_servers (project_id, name, host, port, security, username, password_sealed) VALUES (NULL, 'pool-1', 'pool.example.net', 2525, 'tls', 'pooluser', $1) RETURNING id`,
      [await seal('pool-secret', key, 'smtp_servers.password')]);
    // Another project's own server is never used for this one.
    const foreign = await env.stack.sql.query(
      `INSERT INTO smtp_servers (project_id, name, host, port, security) VALUES ($1, 'theirs', 'smtp.globex.test', 587, 'starttls') RETURNING id`, [env.other.project.id]);
    try {
      const [viaPool] = await jobFor(await send());
      expect(viaPool.route).toEqual({ kind: 'smtp', source: 'pool', host: 'pool.example.net', port: 2525, security: 'tls', username: 'pooluser', password: 'pool-secret' });
      // A node the project enrolled itself never sees the pool's credentials: its mail goes by MX.
      await send();
      expect((await jobsOf(node))[0].route).toEqual({ kind: 'mx', domain: 'example.org' });

      const own = await env.stack.sql.query(
        `INSERT INTO smtp_servers (project_id, name, host, port, security, username, password_sealed) VALUES ($1, 'ours', 'smtp.acme.test', 587, 'starttls', 'acme', $2) RETURNING id`,
        [env.tenant.project.id, await seal('acme-secret', key, 'smtp_servers.password')]);
      const [viaProject] = await jobFor(await send());
      expect(viaProject.route).toEqual({ kind: 'smtp', source: 'project', host: 'smtp.acme.test', port: 587, security: 'starttls', username: 'acme', password: 'acme-secret' });
      // Through an SMTP server the envelope sender stays the bare from address (docs/bounces.md).
      expect([viaPool.envelope, viaProject.envelope]).toEqual([{ from: 'news@acme.test', to: 'ann@example.org' }, { from: 'news@acme.test', to: 'ann@example.org' }]);

      // A password that does not open (sealed under another key) fails the recipient, naming the server.
      await env.stack.sql.query('UPDATE smtp_servers SET password_sealed = $1 WHERE id = $2', [await seal('x', Buffer.alloc(32, 7).toString('base64'), 'smtp_servers.password'), own.rows[0].id]);
      const broken = await send();
      expect(await jobFor(broken)).toEqual([]);
      expect((await row(broken.emails[0]!.id)).error_message).toMatch(/^the password of SMTP server ours \(smtp\.acme\.test:587\) cannot be opened: /);
      await env.stack.sql.query('DELETE FROM smtp_servers WHERE id = $1', [own.rows[0].id]);
    } finally {
      await env.stack.sql.query('DELETE FROM smtp_servers WHERE id = ANY($1)', [[pool.rows[0].id, foreign.rows[0].id]]);
    }
    await send();
    expect((await jobsOf(node))[0].route).toEqual({ kind: 'mx', domain: 'example.org' });
  });

  test.each([
    [{ max: 0 }, 'max'], [{ max: 101 }, 'max'], [{ max: 1.5 }, 'max'], [{}, 'max'], [{ max: '10' }, 'max'],
  ])('400 for %j', async (body, field) => {
    const r = await env.stack.call('POST', '/relay/v1/outbound/claim', { token: node.token, body });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.fields)).toEqual([field]);
  });

  test('credentials: none is 401, a project key is 401, a revoked node is 401 "relay node revoked"', async () => {
    expect((await env.stack.call('POST', '/relay/v1/outbound/claim', { body: { max: 1 } })).body).toEqual({ error: 'relay node credential required' });
    expect((await env.stack.call('POST', '/relay/v1/outbound/claim', { token: env.keys.sender, body: { max: 1 } })).status).toBe(401);
    const doomed = await enroll(env.stack, env.keys.admin, 'mx-doomed');
    const sent = await send();
    const revoked = await env.stack.call('POST', `/api/v1/relay/nodes/${doomed.id}/revoke`, { token: env.keys.admin });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    const r = await claim(doomed, 10);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'relay node revoked' });
    expect((await report(doomed, [result({ email_id: sent.emails[0]!.id, attempt: 1 })])).body).toEqual({ error: 'relay node revoked' });
    expect((await row(sent.emails[0]!.id)).status).toBe('queued');
  });
});

describe('POST /relay/v1/outbound/results', () => {
  test('sent: status sent, the attempt recorded, email.sent in the outbox and handed over; a repeat is stale', async () => {
    const sent = await send({ headers: { 'X-Order-Id': 'A-7' } });
    const [job] = await jobsOf(node);
    const r = await report(node, [result(job, { started_at: '2026-11-26T02:00:00.000Z', duration_ms: 345 })]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ accepted: [job.email_id], stale: [] });

    const logged = await env.stack.call('GET', `/api/v1/emails/${job.email_id}`, { token: env.keys.sender });
    expect(logged.body.email).toMatchObject({
      status: 'sent', attempts: 1, smtp_reply: '250 2.0.0 Ok: queued as ABC', node_id: node.id, error_message: null,
      sent_at: expect.any(String), headers: { 'X-Order-Id': 'A-7' },
      delivery_attempts: [{ attempt: 1, outcome: 'sent', smtp_code: 250, reply: '250 2.0.0 Ok: queued as ABC', server: 'mx.example.org:25', node_id: node.id, started_at: '2026-11-26T02:00:00.000Z', duration_ms: 345 }],
    });
    expect(await row(job.email_id)).toMatchObject({ lease_node_id: null, next_attempt_at: null });

    const events = await outboxOf(job.email_id);
    expect(events).toHaveLength(1);
    expect(events[0].event).toBe('email.sent');
    expect(events[0].data).toEqual({
      id: job.email_id, project_id: env.tenant.project.id, sender: 'news@acme.test', recipients: ['ann@example.org'],
      subject: job.message.subject, status: 'sent', attempts: 1, stream: 'transactional',
    });
    await eventually(() => outboxOf(job.email_id), (rows) => rows[0]?.handed_over_at !== null);

    // Reported again (the answer was lost on the way): stale, nothing twice.
    expect((await report(node, [result(job)])).body).toEqual({ accepted: [], stale: [job.email_id] });
    expect(await attemptsOf(job.email_id)).toHaveLength(1);
    expect(await outboxOf(job.email_id)).toHaveLength(1);
    expect(sent.emails[0]!.id).toBe(job.email_id);
  });

  test('failed (5xx, not a bounce of the address): failed with the reply as error_message, email.failed, no suppression', async () => {
    await send({ to: ['policy@example.org'] });
    const [job] = await jobsOf(node);
    const reply = '550 5.7.1 message refused as spam';
    expect((await report(node, [result(job, { outcome: 'failed', smtp_code: 550, reply })])).body).toEqual({ accepted: [job.email_id], stale: [] });
    expect(await row(job.email_id)).toMatchObject({ status: 'failed', error_message: reply, smtp_reply: reply, node_id: node.id, sent_at: null });
    const [event] = await outboxOf(job.email_id);
    expect(event.event).toBe('email.failed');
    expect(event.data).toEqual({
      id: job.email_id, project_id: env.tenant.project.id, sender: 'news@acme.test', recipients: ['policy@example.org'],
      subject: job.message.subject, status: 'failed', attempts: 1, error_message: reply, stream: 'transactional',
    });
    const { rows } = await env.stack.sql.query(`SELECT 1 FROM suppressions WHERE address = 'policy@example.org'`);
    expect(rows).toEqual([]);
  });

  test('a hard bounce suppresses the address; the next send to it is suppressed, per recipient', async () => {
    await send({ to: ['Gone.User@Example.org'] });
    const [job] = await jobsOf(node);
    const reply = '550 5.1.1 <Gone.User@example.org>: Recipient address rejected: User unknown';
    expect((await report(node, [result(job, { outcome: 'failed', smtp_code: 550, reply })])).body.accepted).toEqual([job.email_id]);
    const listed = await env.stack.call('GET', '/api/v1/suppressions', { token: env.keys.sender });
    expect(listed.body.suppressions).toContainEqual(expect.objectContaining({ address: 'gone.user@example.org', reason: 'hard_bounce' }));

    const next = await send({ to: ['gone.user@example.org', 'still.here@example.org'] });
    expect(next.emails.map((e) => [e.recipient, e.status])).toEqual([['gone.user@example.org', 'suppressed'], ['still.here@example.org', 'queued']]);
    expect((await jobsOf(node)).map((j) => j.envelope.to)).toEqual(['still.here@example.org']);
  });

  test('deferred: queued again after retry_delay doubled per earlier deferral, at most an hour; no event', async () => {
    await send({ to: ['slow@example.org'] });
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      await env.stack.sql.query(`UPDATE emails SET next_attempt_at = now() - interval '1 second' WHERE recipient = 'slow@example.org' AND status = 'queued'`);
      const [job] = await jobsOf(node);
      expect(job.attempt).toBe(i + 1);
      const r = await report(node, [result(job, { outcome: 'deferred', smtp_code: 451, reply: '451 4.7.1 greylisted, try again later' })]);
      expect(r.body.accepted).toEqual([job.email_id]);
      const after = await row(job.email_id);
      expect(after).toMatchObject({ status: 'queued', lease_node_id: null, node_id: node.id, smtp_reply: '451 4.7.1 greylisted, try again later', error_message: null });
      waits.push(await secondsFromNow(after.next_attempt_at));
    }
    [60, 120, 240].forEach((expected, i) => {
      expect(waits[i]).toBeGreaterThan(expected - 5);
      expect(waits[i]).toBeLessThanOrEqual(expected);
    });
    const id = (await env.stack.sql.query(`SELECT id FROM emails WHERE recipient = 'slow@example.org'`)).rows[0].id;
    expect((await attemptsOf(id)).map((a) => [a.attempt, a.outcome, a.smtp_code])).toEqual([[1, 'deferred', 451], [2, 'deferred', 451], [3, 'deferred', 451]]);
    expect(await outboxOf(id)).toEqual([]);

    // Ten deferrals in: capped at an hour. No answer at all (a timeout) keeps the last server reply.
    await env.stack.sql.query(`INSERT INTO email_attempts (email_id, attempt, outcome, started_at, duration_ms) SELECT $1, n, 'deferred', now(), 0 FROM generate_series(100, 106) n`, [id]);
    await env.stack.sql.query(`UPDATE emails SET next_attempt_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const [job] = await jobsOf(node);
    await report(node, [result(job, { outcome: 'deferred', smtp_code: null, reply: 'no answer from mx.example.org within 120000 ms', server: 'mx.example.org:25' })]);
    const capped = await row(id);
    expect(await secondsFromNow(capped.next_attempt_at)).toBeGreaterThan(3600 - 5);
    expect(await secondsFromNow(capped.next_attempt_at)).toBeLessThanOrEqual(3600);
    expect(capped.smtp_reply).toBe('451 4.7.1 greylisted, try again later');
    expect(RETRY_DELAY_MS).toBe(60_000);
  });

  test('deferred past outbound.max_age: failed as expired, naming the age and the last reply, with email.failed', async () => {
    const sent = await send({ to: ['old@example.org'] });
    await env.stack.sql.query(`UPDATE emails SET created_at = now() - interval '3 days 2 hours' WHERE id = $1`, [sent.emails[0]!.id]);
    const [job] = await jobsOf(node);
    await report(node, [result(job, { outcome: 'deferred', smtp_code: 421, reply: '421 4.3.2 service not available' })]);
    const expected = 'expired after 3d 2h: 421 4.3.2 service not available';
    expect(await row(job.email_id)).toMatchObject({ status: 'failed', error_message: expected, next_attempt_at: null });
    const [event] = await outboxOf(job.email_id);
    expect(event).toMatchObject({ event: 'email.failed', data: { status: 'failed', error_message: expected, attempts: 1 } });
    expect((await attemptsOf(job.email_id)).map((a) => a.outcome)).toEqual(['deferred']);
  });

  test('one report, several outcomes, set-based: each judged on its own; unknown and foreign ids are stale', async () => {
    await send({ to: ['m1@example.org', 'm2@example.org', 'm3@example.org'] });
    const jobs = await jobsOf(node);
    const byTo = new Map(jobs.map((j) => [j.envelope.to, j]));
    const foreign = crypto.randomUUID();
    const r = await report(node, [
      result(byTo.get('m1@example.org')),
      result(byTo.get('m2@example.org'), { outcome: 'failed', smtp_code: 554, reply: '554 5.7.0 no' }),
      result({ email_id: foreign, attempt: 1 }),
      result(byTo.get('m3@example.org'), { outcome: 'deferred', smtp_code: 450, reply: '450 4.2.1 busy' }),
    ]);
    expect(r.body).toEqual({ accepted: [byTo.get('m1@example.org').email_id, byTo.get('m2@example.org').email_id, byTo.get('m3@example.org').email_id], stale: [foreign] });
    expect((await row(byTo.get('m1@example.org').email_id)).status).toBe('sent');
    expect((await row(byTo.get('m2@example.org').email_id)).status).toBe('failed');
    expect((await row(byTo.get('m3@example.org').email_id)).status).toBe('queued');

    // Another node cannot report for a lease it does not hold.
    await send({ to: ['m4@example.org'] });
    const [held] = await jobsOf(node);
    expect((await report(second, [result(held)])).body).toEqual({ accepted: [], stale: [held.email_id] });
    expect((await row(held.email_id)).status).toBe('sending');
    // The same recipient twice in one report: the first counts.
    const twice = await report(node, [result(held, { outcome: 'failed', smtp_code: 554, reply: '554 first' }), result(held)]);
    expect(twice.body).toEqual({ accepted: [held.email_id], stale: [held.email_id] });
    expect(await row(held.email_id)).toMatchObject({ status: 'failed', error_message: '554 first' });
  });

  test.each([
    [{ results: [] }, 'results'],
    [{ results: Array.from({ length: 101 }, () => result({ email_id: crypto.randomUUID(), attempt: 1 })) }, 'results'],
    [{ results: [result({ email_id: 'nope', attempt: 1 })] }, 'results.0.email_id'],
    [{ results: [result({ email_id: crypto.randomUUID(), attempt: 1 }, { outcome: 'bounced' })] }, 'results.0.outcome'],
    [{ results: [result({ email_id: crypto.randomUUID(), attempt: 0 })] }, 'results.0.attempt'],
    [{ results: [result({ email_id: crypto.randomUUID(), attempt: 1 }, { started_at: 'yesterday' })] }, 'results.0.started_at'],
    [{ results: [result({ email_id: crypto.randomUUID(), attempt: 1 }, { smtp_code: 99 })] }, 'results.0.smtp_code'],
  ])('400 naming the field (%#)', async (body, field) => {
    const r = await env.stack.call('POST', '/relay/v1/outbound/results', { token: node.token, body });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.fields)).toEqual([field]);
  });

  test('a long reply is kept (cut to 4000 characters), NUL dropped; a large report fits the 1 MiB limit', async () => {
    await send({ to: ['long@example.org'] });
    const [job] = await jobsOf(node);
    const reply = `550-5.7.1 ${'x'.repeat(5000)}\u0000`;
    const bulk = Array.from({ length: 99 }, () => result({ email_id: crypto.randomUUID(), attempt: 1 }, { reply: 'y'.repeat(3000) }));
    const r = await report(node, [result(job, { outcome: 'failed', smtp_code: 550, reply }), ...bulk]);
    expect(r.status, JSON.stringify(r.body).slice(0, 200)).toBe(200);
    expect(r.body.accepted).toEqual([job.email_id]);
    const stored = await row(job.email_id);
    expect(stored.error_message).toHaveLength(4000);
    expect(stored.error_message.startsWith('550-5.7.1 xxx')).toBe(true);
  });

  test('a hostile server\'s reply (NUL, an unpaired surrogate) is stored cleaned; the report is never refused for it', async () => {
    await send({ to: ['hostile@example.org'] });
    const [job] = await jobsOf(node);
    const r = await report(node, [result(job, { outcome: 'failed', smtp_code: 550, reply: '550 no\u0000 such \ud800user', server: 'mx.example.org:25\u0000' })]);
    expect(r.status, JSON.stringify(r.body).slice(0, 200)).toBe(200);
    expect(r.body.accepted).toEqual([job.email_id]);
    expect((await row(job.email_id)).error_message).toBe('550 no such \ufffduser');
  });
});
