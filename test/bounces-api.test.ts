// GET /api/v1/bounces and /api/v1/bounces/{id} (bounces:read): keyset pages
// newest first, the filters, another project's records never shown.
import { beforeAll, describe, expect, test } from 'vitest';
import { useTenantStack } from './support/tenant-stack.js';

const env = useTenantStack({ keys: { reader: ['bounces:read'], emailsOnly: ['emails:read'] } });

let emailId: string;
let otherBounceId: string;

/** Bounce rows written directly (recording them is under test elsewhere), `created_at` a second apart, oldest first. */
async function insertBounces(projectId: string, rows: { recipient: string; type: string; emailId?: string | null; at: number }[]): Promise<string[]> {
  const ids: string[] = [];
  for (const r of rows) {
    const { rows: [row] } = await env.stack.sql.query(
      `INSERT INTO bounces (project_id, email_id, recipient, type, source, status, created_at)
       VALUES ($1, $2, $3, $4, 'dsn', '5.1.1', '2026-11-26T10:00:00Z'::timestamptz + $5 * interval '1 second') RETURNING id`,
      [projectId, r.emailId ?? null, r.recipient, r.type, r.at]);
    ids.push(row.id);
  }
  return ids;
}

let ids: string[];

beforeAll(async () => {
  const { rows: [message] } = await env.stack.sql.query(
    `INSERT INTO outbound_messages (project_id, message_id, "from", subject) VALUES ($1, '<m@acme.test>', 'news@acme.test', 'Hi') RETURNING id`, [env.tenant.project.id]);
  const { rows: [email] } = await env.stack.sql.query(
    `INSERT INTO emails (project_id, message_id, recipient, kind, status) VALUES ($1, $2, 'ann@dest.test', 'to', 'bounced') RETURNING id`, [env.tenant.project.id, message.id]);
  emailId = email.id;
  ids = await insertBounces(env.tenant.project.id, [
    { recipient: 'ann@dest.test', type: 'soft', emailId, at: 0 },
    { recipient: 'ann@dest.test', type: 'hard', emailId, at: 1 },
    { recipient: 'bob@dest.test', type: 'complaint', at: 2 },
    { recipient: 'carol@dest.test', type: 'hard', at: 3 },
    // Two sharing one created_at: the page boundary between them loses neither.
    { recipient: 'dave@dest.test', type: 'soft', at: 4 },
    { recipient: 'erin@dest.test', type: 'soft', at: 4 },
  ]);
  otherBounceId = (await insertBounces(env.other.project.id, [{ recipient: 'ann@dest.test', type: 'hard', at: 5 }]))[0]!;
});

const list = (query = '', token = env.keys.reader) => env.stack.call('GET', `/api/v1/bounces${query}`, { token });

describe('GET /api/v1/bounces', () => {
  test('pages newest first with next until null, every row once, never another project\'s', async () => {
    const seen: string[] = [];
    let query = '?limit=2';
    for (;;) {
      const r = await list(query);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.bounces.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.bounces.map((b: { id: string }) => b.id));
      if (!r.body.next) break;
      query = `?limit=2&before=${encodeURIComponent(r.body.next.before)}&before_id=${r.body.next.before_id}`;
    }
    expect(seen).toHaveLength(ids.length);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen.slice(2)).toEqual([ids[3], ids[2], ids[1], ids[0]]);
    expect(seen).not.toContain(otherBounceId);
  });

  test('the record\'s fields', async () => {
    const r = await list(`?email_id=${emailId}&type=hard`);
    expect(r.body).toEqual({
      bounces: [{
        id: ids[1], project_id: env.tenant.project.id, email_id: emailId, recipient: 'ann@dest.test', type: 'hard', source: 'dsn',
        smtp_code: null, status: '5.1.1', diagnostic: null, remote_mta: null, feedback_type: null, original_message_id: null,
        created_at: '2026-11-26T10:00:01.000Z',
      }],
      next: null,
    });
  });

  test.each([
    ['?type=complaint', [2]],
    ['?type=soft', [5, 4, 0]],
    ['?recipient=ANN@Dest.test', [1, 0]],
    ['?recipient=ann@dest.test&type=soft', [0]],
    ['?recipient=nobody@dest.test', []],
  ])('filter %s', async (query, expected) => {
    const r = await list(query);
    expect(r.status).toBe(200);
    const got = r.body.bounces.map((b: { id: string }) => b.id);
    // dave and erin share created_at: their order is by id.
    expect(new Set(got)).toEqual(new Set(expected.map((i) => ids[i])));
    expect(got).toHaveLength(expected.length);
  });

  test.each([
    ['?type=bounced', 'type', 'must be hard, soft or complaint'],
    ['?email_id=nope', 'email_id', 'must be a UUID'],
    ['?limit=201', 'limit'],
    ['?before_id=00000000-0000-4000-8000-000000000000', 'before'],
    ['?offset=10', 'offset'],
  ])('%s is 400 naming the parameter', async (query, field, problem?: string) => {
    const r = await list(query);
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.fields)).toEqual([field]);
    if (problem) expect(r.body.fields[field]).toBe(problem);
  });

  test('403 without bounces:read', async () => {
    const r = await list('', env.keys.emailsOnly);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'no access to bounces in this project' });
  });
});

describe('GET /api/v1/bounces/{id}', () => {
  test('{bounce}; another project\'s id and an unknown one are 404; 403 without bounces:read', async () => {
    const r = await env.stack.call('GET', `/api/v1/bounces/${ids[2]}`, { token: env.keys.reader });
    expect(r.status).toBe(200);
    expect(r.body.bounce).toMatchObject({ id: ids[2], type: 'complaint', recipient: 'bob@dest.test' });
    for (const id of [otherBounceId, '00000000-0000-4000-8000-000000000000']) {
      const missing = await env.stack.call('GET', `/api/v1/bounces/${id}`, { token: env.keys.reader });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ error: 'bounce not found' });
    }
    expect((await env.stack.call('GET', `/api/v1/bounces/${ids[2]}`, { token: env.keys.emailsOnly })).status).toBe(403);
  });
});
