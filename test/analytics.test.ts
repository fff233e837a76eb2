// Analytics (issue 17): GET /api/v1/analytics reads the daily aggregate
// `email_daily_counts`, kept by the statement-level triggers of migration
// 0009 on `emails`. After every way rows arrive or move (sends with tags and
// two from-domains, suppressed and sandbox rows, claims and delivery results,
// bounces and complaints, concurrent writers) the aggregate must equal a
// count made from the emails themselves, and the route must answer from it.
import { beforeAll, describe, expect, test } from 'vitest';
import pg from 'pg';
import type { Db } from '../edge/src/db/client.js';
import { recordBounces } from '../edge/src/services/delivery/bounces/record.js';
import type { BounceReport } from '../edge/src/services/delivery/bounces/report.js';
import { enroll, type EnrolledNode } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';

const env = useTenantStack({
  keys: {
    sender: ['emails:write', 'emails:read', 'suppressions:write'],
    admin: ['domains:write', 'relay:write'],
    analyst: ['analytics:read'],
  },
});

const STATUSES = ['queued', 'sending', 'sent', 'failed', 'suppressed', 'captured', 'bounced', 'complained', 'canceled'] as const;
type Counts = Record<(typeof STATUSES)[number], number>;
const zeros = (): Counts => Object.fromEntries(STATUSES.map((s) => [s, 0])) as Counts;
const today = () => new Date().toISOString().slice(0, 10);

let node: EnrolledNode;
let sandboxKey: string;

async function verifiedDomain(name: string, token = env.keys.admin) {
  const r = await env.stack.call('POST', '/api/v1/domains', { token, body: { name } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [r.body.domain.id]);
}

beforeAll(async () => {
  await verifiedDomain('acme.test');
  await verifiedDomain('acme-mail.test');
  await verifiedDomain('globex.test', (await env.other.key(['domains:write'])).token);
  node = await enroll(env.stack, env.keys.admin, 'mx-analytics');
  sandboxKey = (await env.tenant.key(['sandbox:write'], { sandbox: true })).token;
});

const send = async (body: Record<string, unknown>, token = env.keys.sender) => {
  const r = await env.stack.call('POST', '/api/v1/emails/send', { token, body: { subject: 'Hi', text: 'Hi', ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { message_id: string; emails: { id: string; recipient: string; status: string }[] };
};
const analytics = async (query = '', token = env.keys.analyst) => {
  const r = await env.stack.call('GET', `/api/v1/analytics${query}`, { token });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.analytics;
};

/** A key for a row of the aggregate. */
const keyOf = (day: string, domain: string, tag: string, status: string) => `${day} ${domain} ${tag || '-'} ${status}`;

/** The aggregate as stored, for every project: zero rows left out (a status moved away leaves one). */
async function aggregate(): Promise<Record<string, number>> {
  const { rows } = await env.stack.sql.query(
    `SELECT project_id, day::text, from_domain, tag, status::text, count FROM email_daily_counts WHERE count <> 0`);
  return Object.fromEntries(rows.map((r) => [`${r.project_id} ${keyOf(r.day, r.from_domain, r.tag, r.status)}`, Number(r.count)]));
}

/** What the aggregate must hold, counted here from the emails and their messages (the from-domain parsed in JS, not by the trigger's function). */
async function truth(): Promise<Record<string, number>> {
  const { rows } = await env.stack.sql.query(
    `SELECT e.project_id, to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, m."from", m.tags, e.status::text
       FROM emails e JOIN outbound_messages m ON m.id = e.message_id`);
  const out: Record<string, number> = {};
  for (const r of rows) {
    const address = /<([^>]*)>\s*$/.exec(r.from)?.[1] ?? r.from;
    const domain = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
    for (const tag of ['', ...new Set<string>(r.tags)]) {
      const k = `${r.project_id} ${keyOf(r.day, domain, tag, r.status)}`;
      out[k] = (out[k] ?? 0) + 1;
    }
  }
  return out;
}

const expectAggregateTrue = async () => expect(await aggregate()).toEqual(await truth());

const claim = async (who = node, max = 100) => {
  const r = await env.stack.call('POST', '/relay/v1/outbound/claim', { token: who.token, body: { max } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.jobs as { email_id: string; attempt: number; recipient?: string }[];
};
const report = async (results: unknown[], who = node) => {
  const r = await env.stack.call('POST', '/relay/v1/outbound/results', { token: who.token, body: { results } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const result = (job: { email_id: string; attempt: number }, extra: Record<string, unknown> = {}) => ({
  email_id: job.email_id, attempt: job.attempt, outcome: 'sent', smtp_code: 250, reply: '250 2.0.0 Ok',
  server: 'mx.example.org:25', started_at: new Date().toISOString(), duration_ms: 50, ...extra,
});

describe('the aggregate, kept by the triggers', () => {
  // Ids of the emails the steps below move along, by recipient.
  const ids = new Map<string, string>();

  test('sends with tags and two from-domains, suppressed and sandbox rows, a batch', async () => {
    expect(await env.stack.call('POST', '/api/v1/suppressions', { token: env.keys.sender, body: { address: 'gone@example.org' } })).toMatchObject({ status: 201 });
    const sent = [
      await send({ from: 'Acme <News@Acme.TEST>', to: ['a@example.org', 'b@example.org'], cc: ['c@example.org'], tags: ['welcome', 'promo'] }),
      await send({ from: 'ops@acme-mail.test', to: ['d@example.org', 'e@example.org'], tags: ['welcome'] }),
      await send({ from: 'news@acme.test', to: ['gone@example.org', 'f@example.org'] }),
      await send({ from: 'news@acme.test', to: ['s@example.org'], tags: ['promo'] }, sandboxKey),
    ];
    const batch = await env.stack.call('POST', '/api/v1/emails/batch', {
      token: env.keys.sender,
      body: { messages: [
        { from: 'news@acme.test', to: ['g@example.org'], subject: 'x', text: 'x', tags: ['promo'] },
        { from: 'ops@acme-mail.test', to: ['h@example.org', 'i@example.org'], subject: 'x', text: 'x' },
      ] },
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(201);
    for (const e of [...sent, ...batch.body.messages].flatMap((m: any) => m.emails)) ids.set(e.recipient, e.id);
    // Another project's sends are its own.
    await send({ from: 'news@globex.test', to: ['a@example.org'], tags: ['welcome'] }, (await env.other.key(['emails:write'])).token);
    await expectAggregateTrue();

    const all = await analytics();
    expect(all.days).toHaveLength(30);
    // Each day also counts opens and clicks (docs/tracking.md): none without tracking.
    const noTracking = { opens: { human: 0, machine: 0 }, clicks: { human: 0, machine: 0 } };
    expect(all.days.at(-1)).toEqual({ day: today(), counts: { ...zeros(), queued: 9, suppressed: 1, captured: 1 }, tracking: noTracking });
    expect(all.days.slice(0, -1).every((d: { counts: Counts }) => Object.values(d.counts).every((n) => n === 0))).toBe(true);
    expect(all.totals).toEqual({ ...zeros(), queued: 9, suppressed: 1, captured: 1 });
    expect(all).toMatchObject({ to: today(), domain: null, tag: null, rates: { bounce_rate: null, complaint_rate: null } });

    const t = (query: string) => analytics(`?from=${today()}&to=${today()}&${query}`).then((a) => a.totals);
    expect(await t('domain=acme.test')).toEqual({ ...zeros(), queued: 5, suppressed: 1, captured: 1 });
    expect(await t('domain=ACME-Mail.test')).toEqual({ ...zeros(), queued: 4 });
    expect(await t('tag=welcome')).toEqual({ ...zeros(), queued: 5 });
    expect(await t('tag=promo')).toEqual({ ...zeros(), queued: 4, captured: 1 });
    expect(await t('tag=promo&domain=acme-mail.test')).toEqual(zeros());
    expect(await t('tag=welcome&domain=acme-mail.test')).toEqual({ ...zeros(), queued: 2 });
    expect(await t('tag=nothing')).toEqual(zeros());
    expect(await t('domain=globex.test')).toEqual(zeros());
  });

  test('claims and delivery results move the counts: queued → sending → sent, failed, queued again', async () => {
    const jobs = await claim();
    expect(jobs).toHaveLength(9);
    await expectAggregateTrue();
    expect((await analytics(`?from=${today()}`)).totals).toMatchObject({ queued: 0, sending: 9 });

    const job = (recipient: string) => jobs.find((j) => j.email_id === ids.get(recipient))!;
    const failing = ['d@example.org'];
    const deferred = ['i@example.org'];
    await report(jobs.map((j) => {
      if (failing.some((r) => job(r) === j)) return result(j, { outcome: 'failed', smtp_code: 550, reply: '550 5.1.1 no such user' });
      if (deferred.some((r) => job(r) === j)) return result(j, { outcome: 'deferred', smtp_code: 451, reply: '451 4.3.0 try later' });
      return result(j);
    }));
    await expectAggregateTrue();
    const totals = (await analytics()).totals;
    expect(totals).toEqual({ ...zeros(), sent: 7, failed: 1, queued: 1, suppressed: 1, captured: 1 });
    expect((await analytics('?domain=acme-mail.test&tag=welcome')).totals).toEqual({ ...zeros(), sent: 1, failed: 1 });
  });

  test('bounces and complaints move sent rows to bounced and complained; the rates follow', async () => {
    const report = (recipient: string, type: BounceReport['type']): BounceReport => ({
      emailId: ids.get(recipient)!, type, source: 'dsn', sourceRef: `ref-${recipient}`, smtpCode: null,
      status: type === 'hard' ? '5.1.1' : null, diagnostic: null, remoteMta: null,
      feedbackType: type === 'complaint' ? 'abuse' : null, originalMessageId: null,
    });
    await recordBounces(env.stack.db as unknown as Db, [report('a@example.org', 'hard'), report('b@example.org', 'complaint'), report('e@example.org', 'soft')]);
    await expectAggregateTrue();
    const all = await analytics();
    // A soft bounce leaves the email sent.
    expect(all.totals).toEqual({ ...zeros(), sent: 5, bounced: 1, complained: 1, failed: 1, queued: 1, suppressed: 1, captured: 1 });
    // (bounced + failed) ÷ (sent + bounced + complained + failed); complained ÷ the same.
    expect(all.rates).toEqual({ bounce_rate: 2 / 8, complaint_rate: 1 / 8 });
    expect((await analytics('?tag=welcome')).rates).toEqual({ bounce_rate: 2 / 5, complaint_rate: 1 / 5 });
    expect((await analytics('?domain=acme-mail.test')).rates).toEqual({ bounce_rate: 1 / 3, complaint_rate: 0 });
  });

  test('a tag given twice counts once; tags are compared exactly', async () => {
    await send({ from: 'news@acme.test', to: ['dup@example.org'], tags: ['dup', 'dup', 'Dup'] });
    await expectAggregateTrue();
    expect((await analytics('?tag=dup')).totals).toEqual({ ...zeros(), queued: 1 });
    expect((await analytics('?tag=Dup')).totals).toEqual({ ...zeros(), queued: 1 });
  });

  test('concurrent sends of one project: every row counted once, no error', async () => {
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => env.stack.call('POST', '/api/v1/emails/send', {
      token: env.keys.sender,
      body: { from: i % 2 ? 'news@acme.test' : 'ops@acme-mail.test', to: [`p${i}@example.org`, `q${i}@example.org`], subject: 'x', text: 'x', tags: ['burst', `n${i % 3}`] },
    })));
    expect(replies.map((r) => r.status)).toEqual(Array(12).fill(201));
    await expectAggregateTrue();
    expect((await analytics('?tag=burst')).totals).toEqual({ ...zeros(), queued: 24 });
  });

  test('concurrent transactions each moving rows of both projects in one statement: no lost update, no deadlock', async () => {
    await Promise.all(Array.from({ length: 4 }, (_, i) => send({ from: 'news@acme.test', to: [`r${i}@example.org`, `t${i}@example.org`], tags: ['race'] })));
    const other = (await env.other.key(['emails:write'])).token;
    await Promise.all(Array.from({ length: 4 }, (_, i) => send({ from: 'news@globex.test', to: [`r${i}@example.org`, `t${i}@example.org`], tags: ['race'] }, other)));
    const raced = async (projectId: string) => (await env.stack.sql.query(
      `SELECT e.id FROM emails e JOIN outbound_messages m ON m.id = e.message_id WHERE 'race' = ANY(m.tags) AND e.project_id = $1 ORDER BY e.id`, [projectId])).rows.map((r) => r.id as string);
    const [mine, theirs] = [await raced(env.tenant.project.id), await raced(env.other.project.id)];
    expect([mine.length, theirs.length]).toEqual([8, 8]);
    // Four transactions, two rows of each project apiece: one statement moves all four (its
    // trigger upserts both projects' counts), then a second moves one row on, while the
    // others wait on the same counts.
    const pool = new pg.Pool({ connectionString: env.stack.databaseUrl, max: 4 });
    try {
      await Promise.all([0, 1, 2, 3].map(async (k) => {
        const slice = [mine[2 * k]!, mine[2 * k + 1]!, theirs[2 * k]!, theirs[2 * k + 1]!];
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await client.query(`UPDATE emails SET status = 'sent' WHERE id = ANY($1)`, [k % 2 ? [...slice].reverse() : slice]);
          await client.query('SELECT pg_sleep(0.1)');
          await client.query(`UPDATE emails SET status = 'bounced' WHERE id = $1`, [k % 2 ? slice[2] : slice[0]]);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      }));
    } finally {
      await pool.end();
    }
    await expectAggregateTrue();
    expect((await analytics('?tag=race')).totals).toEqual({ ...zeros(), sent: 6, bounced: 2 });
  });
});

describe('the range', () => {
  test('each email counts on the UTC day it was created; every day of the range is present, in order', async () => {
    // Rows made as a send on those days would have made them (created_at is the send's).
    const { rows: [m] } = await env.stack.sql.query(
      `INSERT INTO outbound_messages (project_id, message_id, "from", subject, tags, created_at)
       VALUES ($1, '<old@acme.test>', 'news@acme.test', 'old', '{old}', '2025-03-01T23:59:59Z') RETURNING id`, [env.tenant.project.id]);
    await env.stack.sql.query(
      `INSERT INTO emails (project_id, message_id, recipient, kind, status, created_at) VALUES
       ($1, $2, 'x@example.org', 'to', 'sent', '2025-03-01T23:59:59.999Z'),
       ($1, $2, 'y@example.org', 'to', 'sent', '2025-03-02T00:00:00Z'),
       ($1, $2, 'z@example.org', 'to', 'failed', '2025-03-02T12:00:00+14:00')`, [env.tenant.project.id, m.id]);
    await expectAggregateTrue();
    const a = await analytics('?from=2025-02-27&to=2025-03-03&tag=old');
    expect(a).toMatchObject({ from: '2025-02-27', to: '2025-03-03', tag: 'old', domain: null });
    expect(a.days.map((d: { day: string; counts: Counts }) => [d.day, d.counts.sent, d.counts.failed])).toEqual([
      ['2025-02-27', 0, 0], ['2025-02-28', 0, 0], ['2025-03-01', 1, 1], ['2025-03-02', 1, 0], ['2025-03-03', 0, 0],
    ]);
    // 366 days is the longest range; a leap year's February is a day.
    expect((await analytics('?from=2024-01-01&to=2024-12-31')).days).toHaveLength(366);
    expect((await analytics('?from=2024-02-28&to=2024-03-01')).days.map((d: { day: string }) => d.day)).toEqual(['2024-02-28', '2024-02-29', '2024-03-01']);
  });

  test('defaults: the 30 days up to today; `from` alone runs to today, `to` alone starts 29 days before it', async () => {
    const a = await analytics('?to=2025-03-10');
    expect([a.from, a.to, a.days.length]).toEqual(['2025-02-09', '2025-03-10', 30]);
    const b = await analytics(`?from=${today()}`);
    expect([b.from, b.to, b.days.length]).toEqual([today(), today(), 1]);
  });

  test.each([
    ['from=2025-02-30', 'from', 'must be a date YYYY-MM-DD'],
    ['from=2025-3-1', 'from', 'must be a date YYYY-MM-DD'],
    ['to=yesterday', 'to', 'must be a date YYYY-MM-DD'],
    ['to=2025-03-01T00:00:00Z', 'to', 'must be a date YYYY-MM-DD'],
    ['from=2025-03-02&to=2025-03-01', 'to', 'must not be before from (2025-03-02)'],
    ['from=2024-01-01&to=2025-01-01', 'to', 'the range must be at most 366 days (2024-01-01 to 2025-01-01 is 367)'],
    ['domain=', 'domain', 'must not be empty'],
    ['tag=', 'tag', 'must not be empty'],
    [`tag=${'x'.repeat(101)}`, 'tag', 'must be at most 100 characters'],
  ])('?%s is 400 naming the parameter', async (query, field, problem) => {
    const r = await env.stack.call('GET', `/api/v1/analytics?${query}`, { token: env.keys.analyst });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid query: ${field}: ${problem}`, fields: { [field]: problem } });
  });

  test('needs analytics:read', async () => {
    const r = await env.stack.call('GET', '/api/v1/analytics', { token: env.keys.sender });
    expect(r).toMatchObject({ status: 403, body: { error: 'no access to analytics in this project' } });
  });
});

describe('email rows purged', () => {
  test('a purge of email rows keeps the counts (analytics outlive the log)', async () => {
    const before = await analytics();
    const { rows: [message] } = await env.stack.sql.query(
      `SELECT m.id FROM outbound_messages m WHERE m.project_id = $1 AND 'race' = ANY(m.tags) LIMIT 1`, [env.tenant.project.id]);
    await env.stack.sql.query('DELETE FROM emails WHERE message_id = $1', [message.id]);
    expect(await analytics()).toEqual(before);
  });
});
