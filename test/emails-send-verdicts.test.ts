// A send is one statement after the key look-up (issue 16, "Send in one
// transaction"): the suppressions, the from-domain, the stored answer and the
// plan's usage are read in the statement that writes, and the idempotency
// record's text is put together there. These are the cases that makes
// delicate: the stored text against the answer sent, byte for byte, with
// suppressed recipients; concurrent sends; which refusal wins when several
// apply; and a refusal writing nothing.
import { beforeAll, describe, expect, test } from 'vitest';
import { useTenantStack } from './support/tenant-stack.js';

const env = useTenantStack({ keys: { sender: ['emails:write', 'emails:read', 'suppressions:write'], domains: ['domains:write'] } });

let sandboxKey: string;

async function verifiedDomain(token: string, name: string): Promise<string> {
  const r = await env.stack.call('POST', '/api/v1/domains', { token, body: { name } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [r.body.domain.id]);
  return r.body.domain.id;
}

const suppress = async (address: string, token = env.keys.sender, reason = 'manual') =>
  expect((await env.stack.call('POST', '/api/v1/suppressions', { token, body: { address, reason } })).status).toBe(201);

beforeAll(async () => {
  await verifiedDomain(env.keys.domains, 'verdicts.test');
  expect((await env.stack.call('POST', '/api/v1/domains', { token: env.keys.domains, body: { name: 'pending.verdicts.test' } })).status).toBe(201);
  sandboxKey = (await env.tenant.key(['sandbox:write'], { sandbox: true })).token;
  await suppress('Gone@Example.org');
  await suppress('left@example.org', undefined, 'unsubscribe');
});

const minimal = (extra: Record<string, unknown> = {}) => ({ from: 'news@verdicts.test', to: ['ann@example.org'], subject: 'Hello', text: 'Hi', ...extra });
const key = () => `k-${crypto.randomUUID()}`;

/** The route's answer as sent: status, the replay header and the body's exact text. */
async function post(path: string, body: unknown, token: string, idempotencyKey?: string) {
  const res = await fetch(`${env.stack.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), text: await res.text() };
}

const storedText = async (k: string) =>
  (await env.stack.sql.query('SELECT response_body FROM idempotency_keys WHERE key = $1 OR key = $2', [k, `sandbox\u001f${k}`])).rows.map((r) => r.response_body);

async function counts(projectId = env.tenant.project.id) {
  const { rows: [row] } = await env.stack.sql.query(`SELECT
    (SELECT count(*) FROM outbound_messages WHERE project_id = $1)::int AS messages,
    (SELECT count(*) FROM emails WHERE project_id = $1)::int AS emails,
    (SELECT count(*) FROM idempotency_keys WHERE project_id = $1)::int AS keys`, [projectId]);
  return row as { messages: number; emails: number; keys: number };
}

describe('the stored answer is the answer sent, byte for byte', () => {
  // Quotes, a backslash, a control character the schema lets through, a tab, a line separator, astral
  // characters and a piece of the answer's own JSON: JSON.stringify escapes some of them.
  const awkward = 'He said "hi" \\ back\u001fslash\ttab\u2028é 𝄞 </script> ","status":"queued",';

  test('a batch with suppressed recipients (to and cc, any case) and text that needs escaping', async () => {
    const k = key();
    const body = {
      messages: [
        minimal({ to: ['gone@EXAMPLE.org', 'ann@example.org'], cc: ['Left@example.org'], subject: awkward, tags: ['a"b', 'c\\d'], headers: { 'X-Note': awkward } }),
        minimal({ from: '"Acme, Inc." <news@verdicts.test>', to: ['bob@example.org'] }),
      ],
    };
    const first = await post('/api/v1/emails/batch', body, env.keys.sender, k);
    expect(first.status, first.text).toBe(201);
    expect(first.replayed).toBeNull();
    const answer = JSON.parse(first.text);
    expect(answer.messages.map((m: any) => m.emails.map((e: any) => [e.recipient, e.status, e.error_message]))).toEqual([
      [['gone@example.org', 'suppressed', 'recipient is suppressed (manual)'], ['ann@example.org', 'queued', null], ['Left@example.org', 'suppressed', 'recipient is suppressed (unsubscribe)']],
      [['bob@example.org', 'queued', null]],
    ]);
    expect(answer.messages[0].emails[0].subject).toBe(awkward);
    expect(await storedText(k)).toEqual([first.text]);

    // The rows say what the answer said.
    const { rows } = await env.stack.sql.query(
      'SELECT id, status::text, error_message, next_attempt_at IS NOT NULL AS due FROM emails WHERE message_id = ANY($1)', [answer.messages.map((m: any) => m.message_id)]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const e of answer.messages.flatMap((m: any) => m.emails)) {
      expect(byId.get(e.id)).toEqual({ id: e.id, status: e.status, error_message: e.error_message, due: e.status === 'queued' });
    }

    const again = await post('/api/v1/emails/batch', body, env.keys.sender, k);
    expect(again).toEqual({ status: 201, replayed: 'true', text: first.text });
  });

  test('a sandbox send: captured and suppressed rows, stored in the sandbox namespace', async () => {
    const k = key();
    const body = minimal({ to: ['ann@example.org', 'gone@example.org'], subject: awkward });
    const first = await post('/api/v1/emails/send', body, sandboxKey, k);
    expect(first.status, first.text).toBe(201);
    expect(JSON.parse(first.text).emails.map((e: any) => [e.status, e.error_message, e.sandbox])).toEqual([
      ['captured', null, true], ['suppressed', 'recipient is suppressed (manual)', true],
    ]);
    expect(await storedText(k)).toEqual([first.text]);
    expect(await post('/api/v1/emails/send', body, sandboxKey, k)).toEqual({ status: 201, replayed: 'true', text: first.text });
  });

  test('concurrent first uses of one key with a suppressed recipient: one send written, every answer the same bytes', async () => {
    const k = key();
    const before = await counts();
    const body = minimal({ to: ['gone@example.org', 'race@example.org'] });
    const replies = await Promise.all(Array.from({ length: 8 }, () => post('/api/v1/emails/send', body, env.keys.sender, k)));
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
    expect(replies.filter((r) => r.replayed === 'true')).toHaveLength(7);
    expect(JSON.parse(replies[0]!.text).emails.map((e: any) => e.status)).toEqual(['suppressed', 'queued']);
    expect(await storedText(k)).toEqual([replies[0]!.text]);
    expect(await counts()).toEqual({ messages: before.messages + 1, emails: before.emails + 2, keys: before.keys + 1 });
  });
});

describe('which refusal wins', () => {
  interface PlanProject { projectId: string; plan: string; token: string; domainsToken: string }

  /** A project on a plan of `hourly` sends an hour, with a verified `<tag>.test` and a pending `pending.<tag>.test`. */
  async function planProject(hourly: number): Promise<PlanProject & { domain: string }> {
    const tag = crypto.randomUUID().slice(0, 8);
    const plan = `plan-${tag}`;
    const p = await env.stack.call('POST', '/api/v1/admin/plans', { token: env.admin, body: { name: plan, hourly_email_limit: hourly, daily_email_limit: 0 } });
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    const project = await env.stack.call('POST', '/api/v1/admin/projects', { token: env.admin, body: { name: `p-${tag}`, plan_id: p.body.plan.id } });
    expect(project.status).toBe(201);
    const projectId = project.body.project.id;
    const keyFor = async (permissions: string[]) => {
      const r = await env.stack.call('POST', '/api/v1/api-keys', { token: env.admin, headers: { 'X-Service-Project-Id': projectId }, body: { name: 'k', permissions } });
      expect(r.status).toBe(201);
      return r.body.token as string;
    };
    const domainsToken = await keyFor(['domains:write']);
    const domain = `d${tag}.test`;
    await verifiedDomain(domainsToken, domain);
    expect((await env.stack.call('POST', '/api/v1/domains', { token: domainsToken, body: { name: `pending.${domain}` } })).status).toBe(201);
    return { projectId, plan, domain, domainsToken, token: await keyFor(['emails:write', 'suppressions:write']) };
  }

  const hourly = (n: number, plan: string) => `hourly email limit reached (${n} per hour on plan ${plan})`;

  test('a stored answer wins over the limits and a lost verification: the replay, or 409 for another body', async () => {
    const p = await planProject(1);
    const k = key();
    const body = minimal({ from: `news@${p.domain}` });
    const first = await post('/api/v1/emails/send', body, p.token, k);
    expect(first.status, first.text).toBe(201);
    // The project is now at its limit, and then the domain loses its verification.
    expect((await post('/api/v1/emails/send', minimal({ from: `news@${p.domain}`, to: ['x@example.org'] }), p.token)).text).toBe(JSON.stringify({ error: hourly(1, p.plan) }));
    await env.stack.sql.query('UPDATE domains SET verified_at = NULL WHERE name = $1', [p.domain]);
    const before = await counts(p.projectId);
    expect(await post('/api/v1/emails/send', body, p.token, k)).toEqual({ status: 201, replayed: 'true', text: first.text });
    const other = await post('/api/v1/emails/send', minimal({ from: `news@${p.domain}`, subject: 'another body' }), p.token, k);
    expect(other.status).toBe(409);
    expect(JSON.parse(other.text)).toEqual({ error: `Idempotency-Key ${k} was used with another request body` });
    expect(await counts(p.projectId)).toEqual(before);
  });

  test('the from-domain wins over the limits: 400 naming from, not 429; nothing written', async () => {
    const p = await planProject(1);
    expect((await post('/api/v1/emails/send', minimal({ from: `news@${p.domain}` }), p.token)).status).toBe(201);
    const before = await counts(p.projectId);
    const k = key();
    const r = await post('/api/v1/emails/send', minimal({ from: `news@pending.${p.domain}`, to: ['a@example.org', 'b@example.org'] }), p.token, k);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).fields.from).toContain(`from domain pending.${p.domain} is not verified: `);
    expect(await counts(p.projectId)).toEqual(before);
    // The key stays free: with a good body it is a plain 429 (still refused, so still free).
    const limited = await post('/api/v1/emails/send', minimal({ from: `news@${p.domain}` }), p.token, k);
    expect(JSON.parse(limited.text)).toEqual({ error: hourly(1, p.plan) });
    expect(await counts(p.projectId)).toEqual(before);
  });

  test('in a batch the first message with a bad from-domain is named', async () => {
    const p = await planProject(0);
    const before = await counts(p.projectId);
    const r = await post('/api/v1/emails/batch', {
      messages: [minimal({ from: `news@${p.domain}` }), minimal({ from: 'x@nobody.example' }), minimal({ from: `news@pending.${p.domain}` })],
    }, p.token);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toEqual({
      error: 'invalid request body: messages.1.from: from domain nobody.example is not a domain of this project',
      fields: { 'messages.1.from': 'from domain nobody.example is not a domain of this project' },
    });
    expect(await counts(p.projectId)).toEqual(before);
  });
});

describe('the limits count what the statement reads', () => {
  test('concurrent sends at a limit of 3, each to a suppressed and a fresh recipient: exactly 3 written, suppressed rows uncounted', async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const p = await env.stack.call('POST', '/api/v1/admin/plans', { token: env.admin, body: { name: `three-${tag}`, hourly_email_limit: 3, daily_email_limit: 0 } });
    const project = await env.stack.call('POST', '/api/v1/admin/projects', { token: env.admin, body: { name: `three-${tag}`, plan_id: p.body.plan.id } });
    const projectId = project.body.project.id;
    const keyFor = async (permissions: string[]) => (await env.stack.call('POST', '/api/v1/api-keys', {
      token: env.admin, headers: { 'X-Service-Project-Id': projectId }, body: { name: 'k', permissions },
    })).body.token as string;
    const token = await keyFor(['emails:write', 'suppressions:write']);
    await verifiedDomain(await keyFor(['domains:write']), `three-${tag}.test`);
    await suppress('gone@example.org', token);

    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      post('/api/v1/emails/send', minimal({ from: `news@three-${tag}.test`, to: ['gone@example.org', `r${i}@example.org`] }), token)));
    const accepted = replies.filter((r) => r.status === 201);
    expect(accepted).toHaveLength(3);
    for (const r of accepted) expect(JSON.parse(r.text).emails.map((e: any) => e.status)).toEqual(['suppressed', 'queued']);
    for (const r of replies.filter((x) => x.status !== 201)) {
      expect(r.status).toBe(429);
      expect(JSON.parse(r.text)).toEqual({ error: `hourly email limit reached (3 per hour on plan three-${tag})` });
    }
    const { rows } = await env.stack.sql.query('SELECT status::text, count(*)::int AS n FROM emails WHERE project_id = $1 GROUP BY 1 ORDER BY 1', [projectId]);
    expect(rows).toEqual([{ status: 'queued', n: 3 }, { status: 'suppressed', n: 3 }]);
    expect(await counts(projectId)).toEqual({ messages: 3, emails: 6, keys: 0 });
  });
});
