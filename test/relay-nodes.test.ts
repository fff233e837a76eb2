// Relay nodes as a project manages them (issue 7, docs/relay-protocol.md):
// list with the last heartbeat, revoke.
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { seedProject } from './support/stack.js';
import { useTenantStack } from './support/tenant-stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';

const env = useTenantStack({ keys: { reader: ['relay:read'], writer: ['relay:write'] } });

const LISTENERS = [{ name: 'inbound', port: 2525, tls: 'starttls', proxy_protocol: false }];
const TLS = { source: 'self_signed', not_after: '2027-11-26T00:00:00.000Z' };

/** A node as enrolment and one heartbeat leave it, written directly. */
async function seedNode(projectId: string, name: string, heartbeat = true) {
  const prefix = `myr_${crypto.randomUUID().replace(/-/g, '').slice(0, 8)}`;
  const token = `${prefix}_${'s'.repeat(43)}`;
  const { rows: [row] } = await env.stack.sql.query(
    `INSERT INTO relay_nodes (project_id, name, key_prefix, key_hash, version, listeners, tls, spool_depth, dead_letters, dead_letter_bytes, last_heartbeat_at, last_address)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id, created_at, last_heartbeat_at`,
    heartbeat
      ? [projectId, name, prefix, createHash('sha256').update(token).digest('hex'), '0.1.0', JSON.stringify(LISTENERS), JSON.stringify(TLS), 3, 1, 10_240, new Date('2026-11-26T02:00:00.000Z'), '198.51.100.7']
      : [projectId, name, prefix, createHash('sha256').update(token).digest('hex'), null, '[]', '{}', 0, 0, 0, null, null],
  );
  return { id: row.id as string, prefix, createdAt: (row.created_at as Date).toISOString() };
}

describe('GET /api/v1/relay/nodes', () => {
  test('{relay_nodes}: the project\'s nodes, newest first, with what the last heartbeat said; never the hash', async () => {
    const project = await seedProject(env.stack, env.admin, 'nodes');
    const key = (await project.key(['relay:read'])).token;
    const quiet = await seedNode(project.project.id, 'mx-new', false);
    const busy = await seedNode(project.project.id, 'mx1');
    await env.stack.sql.query(`UPDATE relay_nodes SET created_at = now() - interval '1 hour' WHERE id = $1`, [busy.id]);
    const foreign = await seedNode(env.other.project.id, 'theirs');

    const r = await env.stack.call('GET', '/api/v1/relay/nodes', { token: key });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['relay_nodes']);
    expect(r.body.relay_nodes.map((n: { id: string }) => n.id)).toEqual([quiet.id, busy.id]);
    expect(r.body.relay_nodes[1]).toEqual({
      id: busy.id, project_id: project.project.id, name: 'mx1', key_prefix: busy.prefix, revoked: false, version: '0.1.0',
      listeners: LISTENERS, tls: TLS, spool_depth: 3, dead_letters: 1, dead_letter_bytes: 10_240, last_heartbeat_at: '2026-11-26T02:00:00.000Z', last_address: '198.51.100.7',
      created_at: expect.any(String),
    });
    expect(r.body.relay_nodes[0]).toMatchObject({ name: 'mx-new', version: null, listeners: [], tls: {}, spool_depth: 0, dead_letters: 0, dead_letter_bytes: 0, last_heartbeat_at: null, last_address: null });
    const text = JSON.stringify(r.body);
    expect(text).not.toContain('key_hash');
    expect(text).not.toContain(foreign.id);
  });

  test('a project without nodes gets an empty list', async () => {
    const empty = await seedProject(env.stack, env.admin, 'empty');
    const r = await env.stack.call('GET', '/api/v1/relay/nodes', { token: (await empty.key(['relay:read'])).token });
    expect(r).toMatchObject({ status: 200, body: { relay_nodes: [] } });
  });
});

describe('POST /api/v1/relay/nodes/{id}/revoke', () => {
  test('{relay_node} with revoked true; it stays listed; revoking again keeps the first time', async () => {
    const node = await seedNode(env.tenant.project.id, 'mx-revoked');
    const r = await env.stack.call('POST', `/api/v1/relay/nodes/${node.id}/revoke`, { token: env.keys.writer });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['relay_node']);
    expect(r.body.relay_node).toMatchObject({ id: node.id, project_id: env.tenant.project.id, name: 'mx-revoked', revoked: true });
    const { rows: [first] } = await env.stack.sql.query('SELECT revoked, revoked_at FROM relay_nodes WHERE id = $1', [node.id]);
    expect(first.revoked).toBe(true);
    expect(first.revoked_at).toBeInstanceOf(Date);

    const again = await env.stack.call('POST', `/api/v1/relay/nodes/${node.id}/revoke`, { token: env.keys.writer });
    expect(again.status).toBe(200);
    const { rows: [second] } = await env.stack.sql.query('SELECT revoked_at FROM relay_nodes WHERE id = $1', [node.id]);
    expect(second.revoked_at).toEqual(first.revoked_at);

    const list = await env.stack.call('GET', '/api/v1/relay/nodes', { token: env.keys.reader });
    expect(list.body.relay_nodes.find((n: { id: string }) => n.id === node.id).revoked).toBe(true);
  });

  test('another project\'s node and an unknown id are 404, and stay as they were', async () => {
    const foreign = await seedNode(env.other.project.id, 'not-yours');
    for (const id of [foreign.id, crypto.randomUUID()]) {
      const r = await env.stack.call('POST', `/api/v1/relay/nodes/${id}/revoke`, { token: env.keys.writer });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'relay node not found' });
    }
    const { rows } = await env.stack.sql.query('SELECT revoked, revoked_at FROM relay_nodes WHERE id = $1', [foreign.id]);
    expect(rows).toEqual([{ revoked: false, revoked_at: null }]);
  });

  test('a non-UUID id is 400 naming id', async () => {
    const r = await env.stack.call('POST', '/api/v1/relay/nodes/mx1/revoke', { token: env.keys.writer });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'invalid param: id: must be a UUID', fields: { id: 'must be a UUID' } });
  });
});

describe('through the relay channel', () => {
  test('an enrolled node shows its heartbeat in the list; once revoked, its next call is refused', async () => {
    const project = await seedProject(env.stack, env.admin, 'channel');
    const key = (await project.key(['relay:write', 'relay:read'])).token;
    const enrolled = await env.stack.call('POST', '/relay/v1/enroll', { token: key, body: { name: 'mx-live', version: '0.1.0' } });
    expect(enrolled.status).toBe(201);
    const { node, token } = enrolled.body;
    const beat = { version: '0.1.1', listeners: LISTENERS, tls: TLS, spool_depth: 2 };
    const hb = await env.stack.call('POST', '/relay/v1/heartbeat', { token, body: beat, headers: { 'cf-connecting-ip': '198.51.100.20' } });
    expect(hb.status).toBe(200);

    const list = await env.stack.call('GET', '/api/v1/relay/nodes', { token: key });
    expect(list.body.relay_nodes).toHaveLength(1);
    expect(list.body.relay_nodes[0]).toMatchObject({
      id: node.id, name: 'mx-live', key_prefix: token.slice(0, 12), revoked: false, version: '0.1.1',
      listeners: LISTENERS, tls: TLS, spool_depth: 2, last_address: '198.51.100.20',
    });
    expect(Date.now() - Date.parse(list.body.relay_nodes[0].last_heartbeat_at)).toBeLessThan(60_000);
    expect(JSON.stringify(list.body)).not.toContain(token.slice(13));

    const revoked = await env.stack.call('POST', `/api/v1/relay/nodes/${node.id}/revoke`, { token: key });
    expect(revoked.status).toBe(200);
    expect(revoked.body.relay_node).toMatchObject({ id: node.id, revoked: true, version: '0.1.1' });
    const after = await env.stack.call('POST', '/relay/v1/heartbeat', { token, body: beat });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: 'relay node revoked' });
  });
});

describe('permissions and audit', () => {
  test('list needs relay:read, revoke relay:write; refusals change nothing', async () => {
    const node = await seedNode(env.tenant.project.id, 'mx-guarded');
    const none = (await env.tenant.key(['inbound:read'])).token;
    const cases: [string, string, string, string][] = [
      ['POST', `/api/v1/relay/nodes/${node.id}/revoke`, env.keys.reader, 'permission relay:write required'],
      ['GET', '/api/v1/relay/nodes', env.keys.writer, 'permission relay:read required'],
      ['GET', '/api/v1/relay/nodes', none, 'no access to relay in this project'],
      ['POST', `/api/v1/relay/nodes/${node.id}/revoke`, none, 'no access to relay in this project'],
    ];
    for (const [method, path, token, error] of cases) {
      const r = await env.stack.call(method, path, { token });
      expect([method, path, r.status, r.body]).toEqual([method, path, 403, { error }]);
    }
    expect((await env.stack.sql.query('SELECT revoked FROM relay_nodes WHERE id = $1', [node.id])).rows).toEqual([{ revoked: false }]);
  });

  test('revoke is recorded as relay_node.revoke; the list is not recorded', async () => {
    const node = await seedNode(env.tenant.project.id, 'mx-audited');
    const before = await settledAuditEvents(env.stack, env.admin);
    await env.stack.call('GET', '/api/v1/relay/nodes', { token: env.keys.reader });
    await env.stack.call('POST', `/api/v1/relay/nodes/${node.id}/revoke`, { token: env.keys.writer });
    const events = addedEvents(before, await settledAuditEvents(env.stack, env.admin)).filter((e) => e.project_id === env.tenant.project.id);
    expect(events.map((e) => [e.type, e.path, e.status])).toEqual([['relay_node.revoke', `/api/v1/relay/nodes/${node.id}/revoke`, 200]]);
  });
});
